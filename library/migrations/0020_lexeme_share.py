from importlib import import_module

from django.db import migrations

# 0018's function read the whole list of the commonest lexemes; the search reads the
# question's lexemes' shares through 0021's loupe_lexeme_shares instead. (This step once
# also updated a C extension of Loupe's own, which 0021 drops: nothing to update here.)
OLD_FUNCTION = import_module("library.migrations.0018_chunk_lexeme_frequencies").CREATE


class Migration(migrations.Migration):
    dependencies = [("library", "0019_bm25_index_per_model")]

    operations = [
        migrations.RunSQL(
            sql="DROP FUNCTION IF EXISTS loupe_chunk_lexeme_frequencies()", reverse_sql=OLD_FUNCTION
        ),
    ]
