from django.contrib.postgres.operations import RemoveIndexConcurrently
from django.db import migrations


def index_every_models_full_text(apps, schema_editor):
    # Each embedding model's chunks get a partial GIN index over their full-text vectors
    # (library/vector_indexes.py); a new database gets it with a model's first vectors. Made
    # for every model present, not only the active one, before the global index goes, so a
    # search is never without one. Not atomic: built CONCURRENTLY, chunks can be written
    # meanwhile.
    from library import vector_indexes

    Chunk = apps.get_model("library", "Chunk")
    models = Chunk.objects.values_list("embedding_model", flat=True).distinct().order_by()
    for model in list(models):
        if model:
            vector_indexes.ensure_text_index(model=model)


def drop_the_models_full_text_indexes(apps, schema_editor):
    from library import vector_indexes

    with schema_editor.connection.cursor() as cursor:
        for name in vector_indexes.text_indexes():
            cursor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}")
    vector_indexes._known.clear()


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("library", "0010_source_public")]

    operations = [
        migrations.RunPython(index_every_models_full_text, drop_the_models_full_text_indexes),
        # Every search's full-text side filters on one model (retrieval/search.py), and the
        # table holds the active model's chunks only (a switch overwrites them): the global
        # index duplicated the per-model ones at twice the write cost.
        RemoveIndexConcurrently(model_name="chunk", name="chunk_search_vector_gin"),
    ]
