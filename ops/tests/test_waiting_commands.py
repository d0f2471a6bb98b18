"""`ingest` and `generate` wait for their own jobs: with no worker they run those (and no
one else's) as one registered worker, say what their progress counts, and give up with a
clear message when nothing moves."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.files.base import ContentFile
from django.core.management import CommandError, call_command
from django.db import connection
from django.utils import timezone
from procrastinate.contrib.django.models import ProcrastinateJob, ProcrastinatePeriodicDefer

from generation.documents.models import GeneratedDocument
from generation.documents.services import request_document
from generation.tests.studio.conftest import reply
from ingest.services import add_source
from ingest.tests.data import PDFS
from ingest.waiting import source_progress
from library.models import Source
from notebooks.models import Notebook
from ops.worker import drain_queue

FOUR_PAGES = str(PDFS / "sample-files/pdflatex-4-pages.pdf")
pytestmark = pytest.mark.django_db(transaction=True)


def workers_registered() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT last_value FROM procrastinate_workers_id_seq")
        return cursor.fetchone()[0]


def no_worker_alive() -> None:
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM procrastinate_workers")


@pytest.fixture(autouse=True)
def no_worker_left_behind():
    """The worker rows a test inserts would look alive to the tests after it (the flush
    after a test leaves Procrastinate's tables alone)."""
    yield
    no_worker_alive()


def someone_elses_queued_source(outsider) -> Source:
    notebook = Notebook.objects.create(owner=outsider, title="Theirs")
    return add_source(
        owner=outsider, notebook=notebook, upload=ContentFile(b"Not yours. " * 40, name="x.txt")
    ).source


def test_ingest_without_a_worker_runs_only_its_own_jobs_as_one_worker(fake_openai, outsider):
    drain_queue("ingest")
    no_worker_alive()
    theirs = someone_elses_queued_source(outsider)
    before = workers_registered()
    periodic_before = ProcrastinatePeriodicDefer.objects.count()
    out, err = StringIO(), StringIO()

    call_command("ingest", FOUR_PAGES, "--user", "u", "--notebook", "N", stdout=out, stderr=err)

    assert "pdflatex-4-pages.pdf: ready" in out.getvalue()
    assert workers_registered() - before == 1  # not one per second of waiting
    # No worker loop ran here, so no periodic deferrer raced other commands' (the source of
    # "query cancellation interrupted (UniqueViolation)" when two of them waited at once).
    assert ProcrastinatePeriodicDefer.objects.count() == periodic_before
    theirs.refresh_from_db()
    assert theirs.status == Source.Status.QUEUED
    assert ProcrastinateJob.objects.get(args={"source_id": theirs.pk}).status == "todo"


def test_progress_says_whether_it_counts_pages_or_chunks(notebook):
    source = Source(status=Source.Status.PROCESSING, progress_done=251, progress_total=261)
    source.stage = Source.Stage.READING_IMAGES
    assert source_progress(source) == "processing: read 251/261 pages; reading pages as images"
    source.status = Source.Status.READY
    source.stage, source.progress_done, source.progress_total = Source.Stage.EMBEDDING, 18, 276
    assert source_progress(source) == "ready, searchable by its words: embedded 18/276 chunks"


def test_ingest_gives_up_with_a_clear_message_when_its_job_does_not_move(
    fake_openai, notebook, tmp_path
):
    drain_queue("ingest")
    path = tmp_path / "s.txt"
    path.write_bytes(b"Stuck. " * 40)
    source = add_source(
        owner=notebook.owner, notebook=notebook, upload=ContentFile(path.read_bytes(), "s.txt")
    ).source
    job = ProcrastinateJob.objects.get(args={"source_id": source.pk})
    with connection.cursor() as cursor:
        # A worker that looks alive holds the job and never gets anywhere.
        cursor.execute(
            "INSERT INTO procrastinate_workers (last_heartbeat) VALUES (%s) RETURNING id",
            [timezone.now()],
        )
        [worker_id] = cursor.fetchone()
        cursor.execute(
            "UPDATE procrastinate_jobs SET status = 'doing', worker_id = %s WHERE id = %s",
            [worker_id, job.pk],
        )

    with pytest.raises(CommandError) as raised:
        call_command(
            "ingest",
            str(path),  # the same bytes: the command waits for that source
            "--user",
            notebook.owner.username,
            "--notebook",
            notebook.title,
            "--give-up-after",
            "2",
            stdout=StringIO(),
            stderr=StringIO(),
        )

    message = str(raised.value)
    assert message.startswith("Gave up: nothing moved for 2 s.")
    assert f"s.txt is queued: its job #{job.pk} runs on worker {worker_id}" in message


def test_generate_without_a_worker_makes_its_document_and_leaves_others_queued(
    fake_openai, notebook, outsider, add_ready_source
):
    drain_queue("generate")
    no_worker_alive()
    add_ready_source(notebook, b"Herons hunt fish in shallow water. " * 30, "herons.txt")
    theirs_notebook = Notebook.objects.create(owner=outsider, title="Theirs")
    theirs = request_document(user=outsider, notebook=theirs_notebook, kind="report")
    fake_openai.chat_replies.append(reply({"title": "R", "markdown": "Herons fish [1]."}))
    out = StringIO()

    call_command(
        "generate",
        "--user",
        notebook.owner.username,
        "--notebook",
        notebook.title,
        "--kind",
        "report",
        "--json",
        stdout=out,
    )

    assert json.loads(out.getvalue())["status"] == "ready"
    theirs.refresh_from_db()
    assert theirs.status == GeneratedDocument.Status.QUEUED


def test_generate_waits_for_its_job_to_be_due_again_after_a_transient_failure(
    fake_openai, settings, notebook, add_ready_source
):
    """A model server that fails once puts the job back for a retry a few seconds later:
    the command waits for it to be due, then runs it (it once crashed on the wait)."""
    settings.JOB_RETRY_BASE_SECONDS, settings.OPENAI_MAX_RETRIES = 2, 0
    drain_queue("generate")
    no_worker_alive()
    add_ready_source(notebook, b"Herons hunt fish in shallow water. " * 30, "herons.txt")
    fake_openai.fail_next("500", endpoint="chat/completions")
    fake_openai.chat_replies.append(reply({"title": "R", "markdown": "Herons fish [1]."}))
    out = StringIO()

    call_command(
        *("generate", "--user", notebook.owner.username, "--notebook", notebook.title),
        *("--kind", "report", "--json"),
        stdout=out,
    )

    made = json.loads(out.getvalue())
    assert made["status"] == "ready", made
    job = ProcrastinateJob.objects.filter(task_name="generation.tasks.generate_document")
    assert job.latest("id").attempts == 2  # failed, then run again here once due


def test_ingest_runs_its_job_when_a_worker_that_looks_alive_leaves_it_waiting(
    fake_openai, monkeypatch
):
    from ops import waiting

    monkeypatch.setattr(waiting, "TAKE_OVER_SECONDS", 1.0)
    drain_queue("ingest")
    no_worker_alive()
    with connection.cursor() as cursor:
        # Killed a moment ago, or taking other queues only: its heartbeat is recent.
        cursor.execute("INSERT INTO procrastinate_workers (last_heartbeat) VALUES (now())")
    out = StringIO()

    call_command("ingest", FOUR_PAGES, "--user", "u", "--notebook", "N", stdout=out)

    assert "pdflatex-4-pages.pdf: ready" in out.getvalue()
