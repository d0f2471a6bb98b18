"""Running the job worker, and waiting for sources to finish."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import time
from collections.abc import Callable, Iterable
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connection
from procrastinate import App
from procrastinate.contrib.django import app
from procrastinate.worker import Worker

from library.models import Source
from ops import recovery
from ops.database import worker_connector
from ops.waiting import Waiting, wait_for

logger = logging.getLogger(__name__)

# A worker's heartbeat (procrastinate_workers.last_heartbeat), and how often each worker
# looks for the jobs of one whose heartbeats stopped (JOB_STALLED_SECONDS ago): a killed
# worker's job runs again within JOB_STALLED_SECONDS + RECOVERY_SECONDS (bench/README.md,
# recovery latency), instead of waiting for the minutely sweep of everything else.
HEARTBEAT_SECONDS = 5.0
RECOVERY_SECONDS = 5.0


def drain_queue(queue: str = "ingest") -> None:
    """Run a worker in this process until the queue has no job left.

    The Django connector cannot run a worker (it hands it undecoded JSON), so the worker
    gets its own psycopg connector on the same database.
    """
    connector = app.connector.get_worker_connector()  # type: ignore[attr-defined]
    with app.replace_connector(connector) as worker_app:
        worker_app.run_worker(
            queues=[queue], wait=False, install_signal_handlers=False, listen_notify=False
        )


def wait_for_sources(
    source_ids: Iterable[int],
    *,
    poll_seconds: float = 1.0,
    idle_seconds: float | None = None,
    on_poll: Callable[[list[Source]], None] | None = None,
) -> list[Source]:
    """Block until every source is ready or failed. A worker may be processing them;
    without one, their own jobs (and only theirs) run in this process (ops/waiting.py).

    Raises GaveUp when nothing moved for `idle_seconds` (default WAIT_IDLE_SECONDS).
    """
    return wait_for(
        Waiting(
            work=recovery.SOURCE,
            ids=list(source_ids),
            is_done=lambda source: source.is_finished,
            describe=lambda source: f"{source_name(source)} is {source_progress(source)}",
            on_progress=on_poll,
            idle_seconds=settings.WAIT_IDLE_SECONDS if idle_seconds is None else idle_seconds,
            poll_seconds=poll_seconds,
        )
    )


def source_name(source: Source) -> str:
    return source.filename or source.url or f"source {source.pk}"


def source_progress(source: Source) -> str:
    """Where a source stands, saying what its numbers count (pages or chunks). A ready
    source still has a stage while its summary, guide and vectors are made."""
    ready = source.status == Source.Status.READY
    if not (source.status == Source.Status.PROCESSING or (ready and source.stage)):
        return str(source.status)
    state = "ready, searchable by its words" if ready else "processing"
    done, total = source.progress_done, source.progress_total
    stage = source.stage
    if stage in {Source.Stage.READING, Source.Stage.READING_IMAGES} and total:
        # The pages without a text layer are read last, as images (OCR or vision).
        how = "; reading pages as images" if stage == Source.Stage.READING_IMAGES else ""
        return f"{state}: read {done}/{total} pages{how}"
    if stage == Source.Stage.EMBEDDING and total:
        return f"{state}: embedded {done}/{total} chunks"
    label = Source.Stage(stage).label.lower() if stage else "starting"
    return f"{state}: {label}"


def run_worker(
    *,
    queues: list[str] | None = None,
    concurrency: int = 1,
    shutdown_graceful_timeout: float | None = None,
) -> None:
    """Run a Procrastinate worker until SIGTERM or SIGINT, starting it again whenever it
    stops on its own.

    Procrastinate stops a worker, cleanly and with exit status 0, when one of its side
    tasks (the heartbeat, the LISTEN connection) loses the database: a PostgreSQL restart or
    failover would end every worker for good. Here the worker is started again with a fresh
    connection pool, after a pause that doubles up to 15 s while the database is away.
    """
    with app.replace_connector(worker_connector()) as worker_app:
        asyncio.run(
            _run_until_stopped(
                worker_app,
                queues=queues,
                concurrency=concurrency,
                shutdown_graceful_timeout=shutdown_graceful_timeout,
            )
        )


async def _run_until_stopped(
    worker_app: App,
    *,
    queues: list[str] | None,
    concurrency: int,
    shutdown_graceful_timeout: float | None,
) -> None:
    stopping = asyncio.Event()
    current: list[Worker] = []

    def stop() -> None:
        stopping.set()
        for worker in current:
            worker.stop()

    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop)
    worker_app.perform_import_paths()
    pause = 1.0
    while not stopping.is_set():
        started = time.monotonic()
        try:
            async with worker_app.open_async():
                # App._worker applies the app's worker defaults, as run_worker does.
                options: dict[str, Any] = {
                    "concurrency": concurrency,
                    "update_heartbeat_interval": HEARTBEAT_SECONDS,
                }
                if queues:
                    options["queues"] = queues
                if shutdown_graceful_timeout is not None:
                    options["shutdown_graceful_timeout"] = shutdown_graceful_timeout
                worker = worker_app._worker(install_signal_handlers=False, **options)
                current[:] = [worker]
                side_tasks = [
                    asyncio.create_task(_beat_while_jobs_run(worker_app, worker)),
                    asyncio.create_task(_requeue_stalled_jobs()),
                ]
                try:
                    await worker.run()
                finally:
                    for task in side_tasks:
                        task.cancel()
                        with contextlib.suppress(asyncio.CancelledError):
                            await task
        except Exception:
            logger.exception("the worker failed")
        if stopping.is_set():
            break
        if time.monotonic() - started > 60:
            pause = 1.0  # it ran for a while: this is a new outage, start with a short pause
        logger.warning("the worker stopped on its own (database lost?); again in %.0f s", pause)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stopping.wait(), pause)
        pause = min(pause * 2, 15.0)


async def _beat_while_jobs_run(worker_app: App, worker: Worker) -> None:
    """Heartbeats for the worker while it stops: Procrastinate cancels its own heartbeat
    first, then waits for the running jobs, which may take minutes (a long PDF). Without a
    heartbeat the stalled-job recovery (ops/recovery.py) would run such a job a second time
    elsewhere while it is still running here."""
    while True:
        await asyncio.sleep(HEARTBEAT_SECONDS)
        if worker.worker_id is None or not worker._running_jobs:
            continue
        try:
            await worker_app.job_manager.update_heartbeat(worker.worker_id)
        except Exception as exc:  # the database may be away; the next beat tries again
            logger.debug("heartbeat of worker %s: %s", worker.worker_id, exc)


async def _requeue_stalled_jobs() -> None:
    """Every RECOVERY_SECONDS, the jobs of workers whose heartbeats stopped are queued
    again (ops/recovery.py), on a Django connection of a thread of their own."""
    while True:
        await asyncio.sleep(RECOVERY_SECONDS)
        try:
            await asyncio.to_thread(_requeue_stalled_jobs_now)
        except DatabaseError as exc:  # the database may be away; the next round tries again
            logger.debug("stalled jobs not looked at: %s", exc)


def _requeue_stalled_jobs_now() -> None:
    try:
        recovery.recover_stalled_jobs()
    finally:
        connection.close()
