from django.db import migrations

from library import vector_indexes

MISSING = (
    "Loupe's hybrid search needs two PostgreSQL extensions that this server does not "
    "offer: pg_textsearch (loaded at start: shared_preload_libraries = 'pg_textsearch') and "
    "loupe_rank. The embedded server gets both from `make install` and loads pg_textsearch "
    "when it starts: if it was running before, stop it (`make stop-db`) and run again. A "
    "server of your own (DATABASE_URL): docs/deploy.md says how to install them. "
    "PostgreSQL said: {error}"
)


def create_extensions(apps, schema_editor):
    from django.db import DatabaseError, transaction

    with schema_editor.connection.cursor() as cursor:
        for extension in ("pg_textsearch", "loupe_rank"):
            try:
                with transaction.atomic():
                    cursor.execute(f"CREATE EXTENSION IF NOT EXISTS {extension}")
            except DatabaseError as error:
                raise RuntimeError(MISSING.format(error=str(error).strip())) from error


def drop_extensions(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("DROP EXTENSION IF EXISTS loupe_rank CASCADE")
        cursor.execute("DROP EXTENSION IF EXISTS pg_textsearch CASCADE")
    vector_indexes._known.clear()


def index_every_model(apps, schema_editor):
    # Every embedding model's chunks get their BM25 index (library/vector_indexes.py); a new
    # database gets it with a model's first vectors. Built CONCURRENTLY: chunks can be
    # written meanwhile.
    Chunk = apps.get_model("library", "Chunk")
    models = Chunk.objects.values_list("embedding_model", flat=True).distinct().order_by()
    for model in list(models):
        if model:
            vector_indexes.ensure_bm25_index(model=model)


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("library", "0018_chunk_lexeme_frequencies")]

    operations = [
        migrations.RunPython(create_extensions, drop_extensions),
        migrations.RunPython(index_every_model, migrations.RunPython.noop),
    ]
