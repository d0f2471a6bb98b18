import pytest
from django.urls import reverse
from procrastinate.contrib.django.models import ProcrastinateJob

from ingest.services import SourceBusy, process_source, reprocess_source
from library.models import Chunk, Source


def jobs_for(source):
    return ProcrastinateJob.objects.filter(
        task_name="ingest.tasks.ingest_source", args={"source_id": source.pk}
    )


def test_a_failed_source_is_queued_again_and_then_becomes_ready(notebook, fake_openai):
    from django.core.files.base import ContentFile

    from ingest.services import add_source

    added = add_source(
        owner=notebook.owner,
        notebook=notebook,
        upload=ContentFile(b"Herons eat fish and frogs.", name="herons.txt"),
    )
    fake_openai.fail_next("500", times=2, endpoint="embeddings")  # both tries
    assert process_source(source_id=added.source.pk).status == Source.Status.FAILED

    source = reprocess_source(source=added.source)

    assert source.status == Source.Status.QUEUED
    assert source.error == ""
    assert jobs_for(source).count() == 2
    assert process_source(source_id=source.pk).status == Source.Status.READY
    assert Chunk.objects.filter(source=source).count() == 1


def test_a_ready_source_is_read_again_and_its_chunks_replaced(
    notebook, fake_openai, add_ready_source
):
    source = add_ready_source(notebook, b"Herons eat fish and frogs.")
    old_ids = set(Chunk.objects.filter(source=source).values_list("id", flat=True))

    reprocess_source(source=source)
    source = process_source(source_id=source.pk)

    assert source.status == Source.Status.READY
    new_ids = set(Chunk.objects.filter(source=source).values_list("id", flat=True))
    assert new_ids and not new_ids & old_ids


def test_a_source_still_processing_cannot_be_queued_twice(notebook, fake_openai):
    from django.core.files.base import ContentFile

    from ingest.services import add_source

    added = add_source(
        owner=notebook.owner, notebook=notebook, upload=ContentFile(b"Some words.", name="a.txt")
    )
    with pytest.raises(SourceBusy):
        reprocess_source(source=added.source)
    assert jobs_for(added.source).count() == 1


def test_the_retry_button_queues_the_source_and_returns_the_sources_list(
    client, notebook, fake_openai, add_ready_source
):
    source = add_ready_source(notebook, b"Herons eat fish and frogs.")
    client.force_login(notebook.owner)

    response = client.post(
        reverse("notebooks:reprocess", args=[notebook.pk, source.pk]), HTTP_HX_REQUEST="true"
    )

    assert response.status_code == 200
    assert "waiting for a worker" in response.content.decode()
    assert Source.objects.get(pk=source.pk).status == Source.Status.QUEUED


def test_an_outsider_cannot_reprocess_someone_elses_source(
    client, notebook, outsider, fake_openai, add_ready_source
):
    source = add_ready_source(notebook, b"Herons eat fish and frogs.")
    client.force_login(outsider)

    response = client.post(reverse("notebooks:reprocess", args=[notebook.pk, source.pk]))

    assert response.status_code == 404
    assert Source.objects.get(pk=source.pk).status == Source.Status.READY


def test_a_source_of_another_notebook_is_not_found_through_this_one(
    client, notebook, fake_openai, add_ready_source
):
    from notebooks.models import Notebook

    other = Notebook.objects.create(owner=notebook.owner, title="Other")
    source = add_ready_source(other, b"Herons eat fish and frogs.")
    client.force_login(notebook.owner)

    response = client.post(reverse("notebooks:reprocess", args=[notebook.pk, source.pk]))

    assert response.status_code == 404
