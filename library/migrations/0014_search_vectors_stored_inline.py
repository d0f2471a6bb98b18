from django.db import migrations

# A chunk's full-text vector (about 2 kB for 420 tokens) went, like its text, to the TOAST
# table: the row with its 1.5 kB vector passes PostgreSQL's 2 kB threshold. The hybrid
# search reads it many times per chunk (the match, `ts_rank`, each word pair's test), and
# every read fetched it back from there. STORAGE MAIN keeps it in the row (out of line
# only as a last resort; the text stays out of line): a notebook of 9,000 chunks, hybrid
# 46-49 / 68-72 -> 28-32 / 44-47 ms, dense unchanged (bench/README.md, note 3e). As with
# 0007, it applies to rows written afterwards; re-processing a source rewrites its chunks.
STATEMENT = "ALTER TABLE library_chunk ALTER COLUMN search_vector SET STORAGE {storage}"


class Migration(migrations.Migration):
    dependencies = [("library", "0013_chunk_windows")]

    operations = [
        migrations.RunSQL(
            sql=STATEMENT.format(storage="MAIN"),
            reverse_sql=STATEMENT.format(storage="EXTENDED"),
        )
    ]
