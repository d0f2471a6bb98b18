"""A command that queued work waits for it: `ingest` its sources, `generate` its document.

While a worker is alive the command only watches. With none (or when its own jobs wait
untaken for TAKE_OVER_SECONDS: the worker may take other queues only), it runs the jobs
itself, but only its own: another user's uploads wait for a real worker. It registers as one
worker for the whole wait (its heartbeat tells the stalled-job recovery that its job is
alive), takes over its own jobs left by a dead worker (ops/recovery.py), and gives up with a
message that says where each row stands once nothing has moved for `idle_seconds`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from asgiref.sync import sync_to_async
from django.db import close_old_connections, connection
from django.utils import timezone
from procrastinate import App, JobContext
from procrastinate import exceptions as procrastinate_exceptions
from procrastinate.contrib.django import app
from procrastinate.contrib.django.models import ProcrastinateJob, ProcrastinateWorker
from procrastinate.jobs import Job

from ops import recovery
from ops.database import is_lost_database, worker_connector

logger = logging.getLogger(__name__)

# What the command takes from the queue: one of its own jobs, waiting and due, and only one
# without a procrastinate lock (Loupe's ingest and generate jobs have none).
CLAIM_OWN_JOB = """
UPDATE procrastinate_jobs SET status = 'doing', worker_id = %(worker_id)s
WHERE id = (
    SELECT id FROM procrastinate_jobs
    WHERE id = ANY(%(job_ids)s) AND status = 'todo' AND lock IS NULL
      AND (scheduled_at IS NULL OR scheduled_at <= now())
    ORDER BY priority DESC, id
    LIMIT 1
    FOR UPDATE SKIP LOCKED
)
RETURNING id, status, task_name, priority, lock, queueing_lock, args, scheduled_at,
          queue_name, attempts, worker_id
"""


# How long an own job may wait, due, while another worker looks alive, before it runs here.
TAKE_OVER_SECONDS = 10.0
# A worker counts as alive for this decision when its last heartbeat (one every 5 s) is this
# recent: a worker killed a minute ago must not hold up the command that long.
ALIVE_SECONDS = 25.0


class GaveUp(Exception):
    """Nothing moved for the time allowed; the message says where each row stands."""


@dataclass
class Waiting:
    """What to wait for: rows of one kind of work, how to tell each is done and how to say
    how far it is."""

    work: recovery.Work
    ids: Sequence[int]
    is_done: Callable[[Any], bool]
    describe: Callable[[Any], str]
    on_progress: Callable[[Any], None] | None = None
    idle_seconds: float = 600.0
    poll_seconds: float = 1.0
    # Set while waiting: the worker row this command registered, if it ran jobs.
    worker_id: int | None = field(default=None, init=False)


@dataclass(frozen=True)
class _Look:
    rows: list[Any]
    jobs: list[ProcrastinateJob]

    @property
    def due_job_ids(self) -> list[int]:
        now = timezone.now()
        return [
            job.pk
            for job in self.jobs
            if job.status == "todo" and (job.scheduled_at is None or job.scheduled_at <= now)
        ]

    @property
    def signature(self) -> tuple[Any, ...]:
        # Anything a working job changes: the row's status and progress, the job's state.
        return tuple(
            (row.pk, row.status, row.stage, row.progress_done, row.progress_total)
            for row in self.rows
        ) + tuple((job.pk, job.status, job.attempts) for job in self.jobs)


def wait_for(waiting: Waiting) -> list[Any]:
    """Block until every row is done; raise GaveUp when nothing moves for idle_seconds."""
    with app.replace_connector(worker_connector()) as worker_app:
        return asyncio.run(_wait(worker_app, waiting))


def _look(waiting: Waiting) -> _Look:
    close_old_connections()  # a connection lost while waiting is replaced, not reused
    model = waiting.work.model
    rows = list(model.objects.filter(pk__in=waiting.ids).order_by("pk"))
    work = waiting.work
    jobs = ProcrastinateJob.objects.filter(
        task_name=work.task_name, **{f"args__{work.argument}__in": list(waiting.ids)}
    ).order_by("pk")
    return _Look(rows, list(jobs))


def worker_alive() -> bool:
    """Whether any worker sent a heartbeat lately: queued work then waits its turn, not
    for a worker that is not running."""
    return _another_worker_alive(None)


def _another_worker_alive(own_id: int | None) -> bool:
    since = timezone.now() - timedelta(seconds=ALIVE_SECONDS)
    alive = ProcrastinateWorker.objects.filter(last_heartbeat__gte=since)
    if own_id is not None:
        alive = alive.exclude(pk=own_id)
    return alive.exists()


def _take_over(waiting: Waiting) -> None:
    """Own jobs a dead worker held, or rows whose job ended unfinished: put right now,
    by the same rules as the minute-by-minute recovery."""
    recovery.recover_rows(waiting.work, waiting.ids)


@dataclass
class _Progress:
    signature: tuple[Any, ...] = ()
    last_change: float = field(default_factory=time.monotonic)
    due_since: float | None = None
    heartbeat: asyncio.Task[None] | None = None


async def _wait(worker_app: App, waiting: Waiting) -> list[Any]:
    progress = _Progress()
    async with worker_app.open_async():
        manager = worker_app.job_manager
        try:
            while True:
                try:
                    rows = await _step(worker_app, waiting, progress)
                except Exception as exc:
                    if not is_lost_database(exc):
                        raise
                    # Waiting outlives a database restart; the work resumes once it is back.
                    if time.monotonic() - progress.last_change > waiting.idle_seconds:
                        raise GaveUp(
                            f"Gave up: nothing moved for {waiting.idle_seconds:.0f} s; the "
                            f"database is not reachable ({type(exc).__name__}: {exc})."
                        ) from exc
                    await asyncio.sleep(waiting.poll_seconds)
                    continue
                if rows is not None:
                    return rows
        finally:
            if progress.heartbeat is not None:
                progress.heartbeat.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await progress.heartbeat
            if waiting.worker_id is not None:
                with contextlib.suppress(Exception):  # the database may be gone
                    await manager.unregister_worker(waiting.worker_id)
                waiting.worker_id = None
            # The thread that looked keeps its Django connection otherwise.
            with contextlib.suppress(Exception):
                await sync_to_async(_close_connection)()


async def _step(worker_app: App, waiting: Waiting, progress: _Progress) -> list[Any] | None:
    """Look once, run one own job if it is ours to run; the rows when all are done."""
    look = await sync_to_async(_look)(waiting)
    rows = look.rows
    if len(rows) < len(waiting.ids) or all(waiting.is_done(row) for row in rows):
        return rows
    now = time.monotonic()
    if look.signature != progress.signature:
        progress.signature, progress.last_change = look.signature, now
        if waiting.on_progress:
            waiting.on_progress(rows)
    elif now - progress.last_change > waiting.idle_seconds:
        raise GaveUp(await sync_to_async(_gave_up_message)(waiting, look))
    if not look.due_job_ids:
        progress.due_since = None
    elif progress.due_since is None:
        progress.due_since = now
    # A worker that looks alive may take other queues only, or have been killed a moment
    # ago: an own job it leaves waiting is run here after a while.
    left_waiting = progress.due_since is not None and now - progress.due_since >= TAKE_OVER_SECONDS
    if left_waiting or not await sync_to_async(_another_worker_alive)(waiting.worker_id):
        if waiting.worker_id is None:
            waiting.worker_id = await worker_app.job_manager.register_worker()
            # From the start: a job run here for minutes must not look stalled.
            progress.heartbeat = asyncio.create_task(_beat(worker_app, waiting.worker_id))
        await sync_to_async(_take_over)(waiting)
        if await _run_one_own_job(worker_app, waiting, look):
            return None
    await asyncio.sleep(waiting.poll_seconds)
    return None


def _close_connection() -> None:
    connection.close()


async def _beat(worker_app: App, worker_id: int) -> None:
    # As often as a worker's own (ops/worker.py): four beats fit in JOB_STALLED_SECONDS.
    while True:
        await asyncio.sleep(5)
        try:
            await worker_app.job_manager.update_heartbeat(worker_id)
        except Exception as exc:  # the database is away: try again at the next beat
            logger.warning("the heartbeat of worker %s failed: %s", worker_id, exc)


async def _run_one_own_job(worker_app: App, waiting: Waiting, look: _Look) -> bool:
    """Claim one of the rows' own waiting jobs and run it here; False if none is due."""
    job_ids = [job.pk for job in look.jobs if job.status == "todo"]
    if not job_ids:
        return False
    try:
        row = await worker_app.connector.execute_query_one_async(  # type: ignore[attr-defined]
            CLAIM_OWN_JOB, worker_id=waiting.worker_id, job_ids=job_ids
        )
    except procrastinate_exceptions.NoResult:  # not due yet (a retry waits), or taken
        return False
    job = Job.from_row(row)
    # A worker object for its job processing (the retry decision, recording the result,
    # the Django connection clean-up), without its loop: it would take any job of the queue.
    worker = worker_app._worker(install_signal_handlers=False, wait=False, listen_notify=False)
    worker.worker_id = waiting.worker_id
    context = JobContext(
        app=worker_app,
        worker_name=worker.worker_name,
        worker_queues=None,
        job=job,
        abort_reason=lambda: None,
        start_timestamp=time.time(),
    )
    processing = asyncio.create_task(worker._process_job(context))
    while not processing.done():
        # Progress while the job runs here: it writes its row as it goes.
        await asyncio.wait([processing], timeout=max(waiting.poll_seconds, 1.0))
        if not processing.done() and waiting.on_progress:
            look = await sync_to_async(_look)(waiting)
            waiting.on_progress(look.rows)
    await processing
    return True


def _gave_up_message(waiting: Waiting, look: _Look) -> str:
    lines = [f"Gave up: nothing moved for {waiting.idle_seconds:.0f} s."]
    for row in look.rows:
        if waiting.is_done(row):
            continue
        jobs = [job for job in look.jobs if job.args.get(waiting.work.argument) == row.pk]
        lines.append(f"{waiting.describe(row)}: {_job_state(jobs[-1] if jobs else None)}")
    if not _another_worker_alive(waiting.worker_id):
        lines.append(
            "No worker is running: start one (manage.py worker, or manage.py serve), or run "
            "this command again once the cause is fixed; the work stays queued."
        )
    return "\n".join(lines)


def _job_state(job: ProcrastinateJob | None) -> str:
    if job is None:
        return "no job is queued for it (the recovery job will queue one)"
    if job.status == "todo":
        if job.scheduled_at and job.scheduled_at > timezone.now():
            return (
                f"its job #{job.pk} is to be retried at {job.scheduled_at:%H:%M:%S} UTC "
                f"(attempt {job.attempts + 1})"
            )
        return f"its job #{job.pk} waits for a worker"
    if job.status == "doing":
        worker = ProcrastinateWorker.objects.filter(pk=job.worker_id or 0).first()
        if worker is None:
            return f"its job #{job.pk} was held by a worker that is gone"
        seconds = (timezone.now() - worker.last_heartbeat).total_seconds()
        return (
            f"its job #{job.pk} runs on worker {worker.pk} (last heartbeat {seconds:.0f} s ago) "
            "without progress"
        )
    return f"its job #{job.pk} is {job.status}"
