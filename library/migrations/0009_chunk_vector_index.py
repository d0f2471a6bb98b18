from django.db import migrations


def index_the_active_models_vectors(apps, schema_editor):
    # A database that already holds vectors gets the active model's HNSW index
    # (library/vector_indexes.py); a new one gets it with its first vectors (ingest). Not
    # atomic, so the index is built CONCURRENTLY: chunks can be written meanwhile.
    from library import vector_indexes

    EmbeddingState = apps.get_model("library", "EmbeddingState")
    state = EmbeddingState.objects.filter(pk=1).first()
    if state is None:
        return
    dimensions = vector_indexes.vector_dimensions(model=state.active_model)
    if dimensions:
        vector_indexes.ensure_vector_index(model=state.active_model, dimensions=dimensions)


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("library", "0008_source_kind_generated")]

    operations = [migrations.RunPython(index_the_active_models_vectors, migrations.RunPython.noop)]
