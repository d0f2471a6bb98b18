"""PostgreSQL stopped under a real worker in the middle of an ingest and started again: the
source ends ready, with each chunk once, soon after the database is back (the probe that
left a source "processing" for good)."""

from __future__ import annotations

import contextlib
import time

import pytest
from django.core.files.base import ContentFile
from django.db import close_old_connections

from ingest.services import add_source
from ingest.tests.worker_process import start_worker, stop, wait_until
from library.models import Chunk, Source
from ops import recovery
from ops.database import LOST_DATABASE_ERRORS
from ops.tests.outage import embedded_only, start_database, stop_database
from ops.worker import drain_queue

pytestmark = [pytest.mark.django_db(transaction=True), embedded_only]


def recover() -> None:
    """What the periodic upkeep job does every minute, here every poll (the test's worker
    takes the ingest queue only)."""
    close_old_connections()
    with contextlib.suppress(*LOST_DATABASE_ERRORS):  # not back yet for this process
        recovery.recover_stuck_work()


def test_a_source_being_embedded_when_postgresql_stops_ends_ready_once_it_is_back(
    notebook, fake_openai
):
    drain_queue("ingest")
    words = " ".join(f"word{i}" for i in range(1200))
    source = add_source(
        owner=notebook.owner, notebook=notebook, upload=ContentFile(words.encode(), name="a.txt")
    ).source
    # The second embedding request is answered only after the database has gone.
    fake_openai.slow_seconds = 6
    fake_openai.fail_next("slow", endpoint="embeddings", skip=1)
    worker = start_worker(
        EMBEDDING_BATCH_SIZE="4",
        OPENAI_MAX_RETRIES="0",
        JOB_RETRY_BASE_SECONDS="1",
        JOB_STALLED_SECONDS="20",
    )
    try:
        wait_until(
            lambda: Source.objects.get(pk=source.pk).progress_done >= 4,
            seconds=90,
            what="the worker embedded its first batch",
            worker=worker,
        )
        stop_database()
        time.sleep(12)  # longer than the pools' reconnection tries (8 s)
        start_database()
        back = time.monotonic()

        def ready() -> bool:
            recover()
            try:
                return Source.objects.get(pk=source.pk).status == Source.Status.READY
            except LOST_DATABASE_ERRORS:
                return False

        wait_until(ready, seconds=120, what="the source was ready", worker=worker)
        seconds = time.monotonic() - back
    finally:
        stop(worker)

    source.refresh_from_db()
    assert source.error == ""
    ordinals = list(Chunk.objects.filter(source=source).values_list("ordinal", flat=True))
    assert sorted(ordinals) == list(range(source.chunk_count))  # each chunk once
    assert seconds < 120
