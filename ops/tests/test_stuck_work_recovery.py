"""Work whose job ended without finishing it, or whose job vanished or died with its worker,
is queued again while attempts remain, else failed with a reason that Retry clears; it is
"already being processed" only while a live job holds it."""

from __future__ import annotations

import pytest
from django.core.files.base import ContentFile
from django.db import connection
from django.urls import reverse
from django.utils import translation
from procrastinate.contrib.django.models import ProcrastinateJob

from generation.documents.models import GeneratedDocument
from generation.documents.services import DocumentBusy, request_document, retry_document
from ingest.services import SourceBusy, add_source, reprocess_source
from library.models import Chunk, EmbeddingState, Source
from ops import recovery
from ops.tests.worker_traces import worker_dies_holding_the_job
from ops.worker import drain_queue
from retrieval.tasks import reembed_chunks
from texts import Text

pytestmark = pytest.mark.django_db(transaction=True)


def job_ends_failed(job_id: int, *, attempts: int) -> None:
    """What a job leaves when it raised past its retries (the database went away under it):
    failed after `attempts` runs, its source still "processing"."""
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE procrastinate_jobs SET status = 'doing', attempts = %s WHERE id = %s",
            [attempts - 1, job_id],
        )
        cursor.execute("SELECT procrastinate_finish_job_v1(%s, 'failed', false)", [job_id])


def processing_source(notebook, text: bytes = b"Herons stand still in the shallows. " * 20):
    drain_queue("ingest")  # jobs other tests left behind
    source = add_source(
        owner=notebook.owner, notebook=notebook, upload=ContentFile(text, name="herons.txt")
    ).source
    Source.objects.filter(pk=source.pk).update(
        status=Source.Status.PROCESSING, stage=Source.Stage.READING, progress_done=251
    )
    return source, ProcrastinateJob.objects.get(args={"source_id": source.pk})


def test_a_source_whose_job_failed_with_attempts_left_is_queued_again_and_finishes(
    fake_openai, notebook, settings
):
    settings.JOB_RETRY_ATTEMPTS = 3
    source, job = processing_source(notebook)
    job_ends_failed(job.pk, attempts=1)

    recovered = recovery.recover_stuck_work()

    assert recovered.queued == {"library.Source": [source.pk]}
    source.refresh_from_db()
    assert source.status == Source.Status.QUEUED and source.stage == ""
    job.refresh_from_db()
    assert (job.status, job.attempts) == ("todo", 2)  # the same job, one more attempt
    drain_queue("ingest")
    source.refresh_from_db()
    assert source.status == Source.Status.READY, source.error
    assert Chunk.objects.filter(source=source).count() == source.chunk_count


def test_a_source_whose_last_attempt_failed_is_failed_with_a_reason_and_retry_works(
    fake_openai, client, notebook, settings
):
    settings.JOB_RETRY_ATTEMPTS = 3
    source, job = processing_source(notebook)
    job_ends_failed(job.pk, attempts=3)

    recovered = recovery.recover_stuck_work()

    assert recovered.failed == {"library.Source": [source.pk]}
    source.refresh_from_db()
    assert source.status == Source.Status.FAILED
    assert "stopped before it finished, 3 times" in source.error
    assert "Retry" in source.error
    notebook_page = reverse("notebooks:detail", args=[notebook.pk])
    client.force_login(notebook.owner)
    german = client.get(notebook_page, HTTP_ACCEPT_LANGUAGE="de").content.decode()
    assert "Die Verarbeitung brach 3-mal vor dem Ende ab" in german
    assert "stopped before it finished" not in german

    reprocess_source(source=source)
    drain_queue("ingest")
    source.refresh_from_db()
    assert source.status == Source.Status.READY, source.error


def test_a_ready_source_whose_job_died_while_writing_its_guide_gets_its_vectors(
    fake_openai, notebook, settings
):
    settings.JOB_RETRY_ATTEMPTS = 3
    source, job = processing_source(notebook)
    drain_queue("ingest")
    Chunk.objects.filter(source=source).update(embedding=None)
    Source.objects.filter(pk=source.pk).update(stage=Source.Stage.WRITING_GUIDE)
    job_ends_failed(job.pk, attempts=1)

    recovered = recovery.recover_stuck_work()

    assert recovered.queued == {"library.Source": [source.pk]}
    drain_queue("ingest")
    source.refresh_from_db()
    assert source.is_finished and source.status == Source.Status.READY, source.error
    assert not Chunk.objects.filter(source=source, embedding__isnull=True).exists()


def test_a_source_whose_job_vanished_is_queued_again(fake_openai, notebook):
    source, job = processing_source(notebook)
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM procrastinate_jobs WHERE id = %s", [job.pk])

    recovery.recover_stuck_work()

    new_job = ProcrastinateJob.objects.get(args={"source_id": source.pk})
    assert new_job.status == "todo"
    drain_queue("ingest")
    source.refresh_from_db()
    assert source.status == Source.Status.READY, source.error


def test_a_source_held_by_a_dead_worker_can_be_retried_at_once(fake_openai, notebook):
    source, job = processing_source(notebook)
    worker_dies_holding_the_job(job.pk)

    reprocess_source(source=source)  # not "already being processed"

    job.refresh_from_db()
    assert job.status == "failed"  # so that the stalled-job sweep does not run it as well
    recovery.recover_stuck_work()
    drain_queue("ingest")
    source.refresh_from_db()
    assert source.status == Source.Status.READY, source.error
    ordinals = sorted(Chunk.objects.filter(source=source).values_list("ordinal", flat=True))
    assert ordinals == list(range(source.chunk_count))  # one run's chunks, no duplicate


def test_uploading_a_stuck_source_again_queues_it_again(fake_openai, notebook):
    text = b"Herons stand still in the shallows. " * 20
    source, job = processing_source(notebook, text)
    worker_dies_holding_the_job(job.pk)

    again = add_source(owner=notebook.owner, notebook=notebook, upload=ContentFile(text, "h.txt"))

    assert not again.created and again.source.pk == source.pk
    job.refresh_from_db()
    assert job.status == "failed"
    drain_queue("ingest")
    source.refresh_from_db()
    assert source.status == Source.Status.READY, source.error


def test_a_source_a_live_job_holds_is_busy(fake_openai, notebook):
    source, _ = processing_source(notebook)

    with pytest.raises(SourceBusy, match="already being processed"):
        reprocess_source(source=source)
    assert not recovery.recover_stuck_work().queued


def test_a_stalled_job_on_its_last_attempt_fails_and_its_source_with_it(
    fake_openai, notebook, settings
):
    settings.JOB_RETRY_ATTEMPTS = 2
    source, job = processing_source(notebook)
    with connection.cursor() as cursor:
        cursor.execute("UPDATE procrastinate_jobs SET attempts = 1 WHERE id = %s", [job.pk])
    worker_dies_holding_the_job(job.pk)

    recovered = recovery.recover_stuck_work()

    assert recovered.jobs_failed == [job.pk]
    source.refresh_from_db()
    assert source.status == Source.Status.FAILED, source.status
    assert "2 times" in source.error


def test_a_document_whose_job_failed_for_good_is_failed_and_can_be_retried(
    fake_openai, notebook, add_ready_source, settings
):
    settings.JOB_RETRY_ATTEMPTS = 2
    drain_queue("generate")
    add_ready_source(notebook, b"Herons hunt fish in shallow water. " * 30, "herons.txt")
    document = request_document(user=notebook.owner, notebook=notebook, kind="report")
    GeneratedDocument.objects.filter(pk=document.pk).update(
        status=GeneratedDocument.Status.PROCESSING
    )
    job = ProcrastinateJob.objects.get(args={"document_id": document.pk})
    with pytest.raises(DocumentBusy):
        retry_document(document=document, user=notebook.owner)
    job_ends_failed(job.pk, attempts=2)

    recovery.recover_stuck_work()

    document.refresh_from_db()
    assert document.status == GeneratedDocument.Status.FAILED
    assert "stopped before it finished, 2 times" in document.error
    retry_document(document=document, user=notebook.owner)
    assert ProcrastinateJob.objects.filter(args={"document_id": document.pk}, status="todo")


def test_a_reembed_under_way_without_a_job_is_queued_again(fake_openai, notebook):
    state, _ = EmbeddingState.objects.get_or_create(
        pk=1, defaults={"active_model": "fake-embed", "active_dimensions": 64}
    )
    state.target_model, state.target_dimensions = "fake-embed-next", 64
    state.save()
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM procrastinate_jobs WHERE task_name = %s", [reembed_chunks.name])

    recovered = recovery.recover_stuck_work()

    assert recovered.reembed.startswith("queued again")
    assert ProcrastinateJob.objects.filter(task_name=reembed_chunks.name, status="todo")
    assert not recovery.recover_stuck_work().reembed  # a live job holds it now


def test_a_run_that_lost_the_race_to_another_does_not_fail_the_source_it_made_ready(
    fake_openai, notebook, add_ready_source
):
    ready = add_ready_source(notebook, b"Herons nest in colonies. " * 20, "nest.txt")
    # The overlapping run holds its stale copy, still "processing", and meets the unique
    # ordinals of the chunks the other run wrote.
    stale = Source.objects.get(pk=ready.pk)
    stale.status = Source.Status.PROCESSING

    stale.fail("Processing failed unexpectedly (IntegrityError: chunk_unique_ordinal).")

    assert Source.objects.get(pk=ready.pk).status == Source.Status.READY
    assert stale.status == Source.Status.READY


@pytest.mark.parametrize("work", recovery.registered(), ids=lambda work: work.name)
def test_what_each_kind_of_work_says_when_its_runs_are_spent_is_in_the_german_catalogue(work):
    english = Text(work.gave_up, attempts=3)

    with translation.override("de"):
        german = english.translated()

    assert german != str(english) and "3" in german


def test_a_cancelled_job_is_explained_in_german_too():
    with translation.override("de"):
        german = Text(recovery.CANCELLED).translated()

    assert german.startswith("Der Auftrag wurde vor dem Ende abgebrochen")
