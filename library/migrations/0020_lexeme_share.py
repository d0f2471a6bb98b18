from importlib import import_module

from django.db import migrations

# The hybrid search's idf reads each of the question's lexemes' share of the chunks from
# pg_statistic through loupe_rank's loupe_lexeme_share (postgres/loupe_rank, version 1.1),
# not the whole list of the commonest lexemes through pg_stats (0018's function, dropped).
# The extension's files come with `make install` (the embedded server) or the compose
# database's image (postgres/Dockerfile); a server of one's own: docs/deploy.md.
UPDATE_MISSING = (
    "Loupe's hybrid search needs version 1.1 of the loupe_rank PostgreSQL extension, and "
    "this server has an older one. Run `make install` again (the embedded server), rebuild "
    "the compose database's image (`docker compose build db`), or install it on your own "
    "server as docs/deploy.md says. PostgreSQL said: {error}"
)

# Undone, 0018's function comes back as it made it.
OLD_FUNCTION = import_module("library.migrations.0018_chunk_lexeme_frequencies").CREATE


def update_extension(apps, schema_editor):
    from django.db import DatabaseError, transaction

    with schema_editor.connection.cursor() as cursor:
        try:
            with transaction.atomic():
                cursor.execute("ALTER EXTENSION loupe_rank UPDATE TO '1.1'")
        except DatabaseError as error:
            raise RuntimeError(UPDATE_MISSING.format(error=str(error).strip())) from error


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("library", "0019_bm25_index_per_model")]

    operations = [
        migrations.RunPython(update_extension, migrations.RunPython.noop),
        migrations.RunSQL(
            sql="DROP FUNCTION IF EXISTS loupe_chunk_lexeme_frequencies()", reverse_sql=OLD_FUNCTION
        ),
    ]
