from django.db import migrations

# This step once created two PostgreSQL extensions of Loupe's own build (a BM25 index and
# C ranking functions) and a BM25 index per model. The search now needs nothing beyond
# pgvector (0021 drops what a database still holds of them), so on a new database, or one
# coming from before it, this step does nothing: a server without those extensions must
# still migrate.


class Migration(migrations.Migration):
    dependencies = [("library", "0018_chunk_lexeme_frequencies")]

    operations: list[migrations.operations.base.Operation] = []
