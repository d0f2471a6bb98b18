"""Nothing stays stuck: work whose job died, failed or vanished is queued again or failed.

A source (or generated document, or re-embed) says "queued" or "processing" while a job
works on it. When that job's worker is killed, or the job ends without finishing the work
(the database went away under it, so even the failure could not be written), the row would
say "processing" for ever and refuse a retry. `recover_stuck_work`, run every minute by a
worker (ops/tasks.py), puts each such row right, its own change and the job's in one
transaction on Django's connection:

- a job held by a worker that stopped sending heartbeats is queued again, or failed once it
  has had JOB_RETRY_ATTEMPTS runs;
- a source or document with no live job is queued again while its last job has attempts
  left (or it has no job at all), else failed with a reason, so that Retry works;
- a re-embed under way with no live job is queued again the same way (it resumes).

A job is live when it waits ("todo") or runs on a worker whose heartbeat is recent; only
then is a source "already being processed" (ingest/services/reprocessing.py).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone
from django.utils.translation import gettext_noop
from procrastinate import exceptions, manager, sql
from procrastinate.contrib.django import app
from procrastinate.contrib.django.django_connector import DjangoConnector
from procrastinate.contrib.django.models import ProcrastinateJob

from library.background_work import BackgroundWork
from library.models import EmbeddingState, Source
from texts import Text

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Work:
    """What a job works on: its task, the argument naming the row, the row's model, its name
    in /healthz, and what the row says once its job's attempts are spent ("%(attempts)s")."""

    task_name: str
    argument: str
    model: type[Any]  # a BackgroundWork model, with its own Stage choices
    name: str
    gave_up: str


# Filled by each app's AppConfig.ready (ingest, generation, retrieval): ops sits below the
# apps whose jobs it recovers, so they tell it what their jobs work on.
_works: dict[type[Any], Work] = {}
_reembed_task: list[str] = []


def register(work: Work) -> None:
    """Recover `work`'s rows and jobs from now on (called from an AppConfig.ready)."""
    _works[work.model] = work


def register_reembed(task_name: str) -> None:
    """The task that re-embeds every chunk (library.EmbeddingState), to resume when it died."""
    _reembed_task[:] = [task_name]


def work_for(model: type[Any]) -> Work:
    """The registered work whose rows are `model`'s."""
    try:
        return _works[model]
    except KeyError:
        raise LookupError(f"{model.__name__} is not registered with ops.recovery") from None


def registered() -> list[Work]:
    return list(_works.values())


# Marked for makemessages, as every registered work's `gave_up`: stored as a Text, translated
# when shown (texts/).
CANCELLED = gettext_noop("Its job was cancelled before it finished. Retry to try again.")


@dataclass
class Recovered:
    """What one sweep did, for its log line and the tests."""

    jobs_requeued: list[int] = field(default_factory=list)
    jobs_failed: list[int] = field(default_factory=list)
    queued: dict[str, list[int]] = field(default_factory=dict)
    failed: dict[str, list[int]] = field(default_factory=dict)
    reembed: str = ""

    def __bool__(self) -> bool:
        return bool(
            self.jobs_requeued
            or self.jobs_failed
            or any(self.queued.values())
            or any(self.failed.values())
            or self.reembed
        )


def _django_jobs() -> manager.JobManager:
    # Procrastinate's queries on Django's own connection, inside the caller's transaction:
    # in a worker the app's connector is the worker's pool, outside any transaction of ours.
    return manager.JobManager(DjangoConnector())


def _alive_since() -> datetime:
    return timezone.now() - timedelta(seconds=settings.JOB_STALLED_SECONDS)


def live_jobs(task_name: str) -> QuerySet[ProcrastinateJob]:
    """The task's jobs that wait, or run on a worker that is alive."""
    return ProcrastinateJob.objects.filter(task_name=task_name).filter(
        Q(status="todo") | Q(status="doing", worker__last_heartbeat__gte=_alive_since())
    )


def jobs_of(work: Work, object_id: int) -> QuerySet[ProcrastinateJob]:
    return ProcrastinateJob.objects.filter(
        task_name=work.task_name, args__contains={work.argument: object_id}
    )


def is_held(row: BackgroundWork) -> bool:
    """Whether a live job holds the row: only then is it "already being processed"."""
    return _is_held(work_for(type(row)), row.pk)


def release_dead_jobs(row: BackgroundWork) -> None:
    """Fail the row's jobs still marked running by a dead worker, before a new job takes
    over: the stalled-job sweep would otherwise run them again beside it."""
    _release_dead_jobs(work_for(type(row)), row.pk)


def _is_held(work: Work, object_id: int) -> bool:
    return live_jobs(work.task_name).filter(args__contains={work.argument: object_id}).exists()


def _release_dead_jobs(work: Work, object_id: int) -> None:
    dead = jobs_of(work, object_id).filter(status="doing").exclude(pk__in=live_jobs(work.task_name))
    for job_id in dead.values_list("pk", flat=True):
        _finish_failed(job_id)


def defer(
    task_name: str, task_kwargs: dict[str, Any] | None = None, *, queueing_lock: str | None = None
) -> int:
    """Queue a job on Django's connection, so it commits or rolls back with the caller."""
    deferrer = app.tasks[task_name].configure(queueing_lock=queueing_lock)
    job = _django_jobs().defer_job(deferrer.make_new_job(**(task_kwargs or {})))
    assert job.id is not None
    return job.id


def _retry_now(job_id: int) -> None:
    _django_jobs().retry_job_by_id(job_id, retry_at=timezone.now())


def _finish_failed(job_id: int) -> None:
    DjangoConnector().execute_query(
        sql.queries["finish_job"], job_id=job_id, status="failed", delete_job=False
    )


def recover_stuck_work() -> Recovered:
    """Put right every job of a dead worker and every row left unfinished with no live job."""
    recovered = Recovered()
    _recover_stalled_jobs(recovered)
    for work in registered():
        _settle_unfinished(work, recovered)
    _settle_reembed(recovered)
    if recovered:
        logger.warning("recovered stuck work: %s", recovered)
    return recovered


def recover_stalled_jobs() -> Recovered:
    """Only the jobs of dead workers: what a worker looks for every few seconds
    (ops/worker.py), so that a killed worker's job runs again soon after its last
    heartbeat is JOB_STALLED_SECONDS old."""
    recovered = Recovered()
    _recover_stalled_jobs(recovered)
    if recovered:
        logger.warning("recovered stuck work: %s", recovered)
    return recovered


def recover_rows(work: Work, ids: Sequence[int]) -> Recovered:
    """The same, for these rows only (a command waiting for its own work, ops/waiting.py)."""
    recovered = Recovered()
    job_ids: list[int] = []
    for pk in ids:
        job_ids.extend(jobs_of(work, pk).filter(status="doing").values_list("pk", flat=True))
    if job_ids:
        _recover_stalled_jobs(recovered, job_ids=job_ids)
    _settle_unfinished(work, recovered, ids=ids)
    if recovered:
        logger.warning("recovered stuck work: %s", recovered)
    return recovered


def _recover_stalled_jobs(recovered: Recovered, job_ids: Sequence[int] | None = None) -> None:
    """Jobs a dead worker left "doing": queued again while they have attempts left."""
    since = _alive_since()
    stalled = ProcrastinateJob.objects.filter(status="doing").exclude(
        worker__last_heartbeat__gte=since
    )
    if job_ids is not None:
        stalled = stalled.filter(pk__in=job_ids)
    for job_id in list(stalled.values_list("pk", flat=True)):
        with transaction.atomic():
            job = (
                ProcrastinateJob.objects.select_for_update(skip_locked=True, of=("self",))
                .filter(pk=job_id, status="doing")
                .exclude(worker__last_heartbeat__gte=since)
                .first()
            )
            if job is None:
                continue  # finished, or taken by another sweep, meanwhile
            # A retry counts as a run: a job that kills its worker every time (a file that
            # exhausts the memory) ends failed instead of looping.
            if job.attempts + 1 < settings.JOB_RETRY_ATTEMPTS:
                try:
                    with transaction.atomic():
                        _retry_now(job.pk)
                    recovered.jobs_requeued.append(job.pk)
                    continue
                except exceptions.UniqueViolation:
                    pass  # a job with its queueing lock waits already: that one will run
            _finish_failed(job.pk)
            recovered.jobs_failed.append(job.pk)


def _settle_unfinished(work: Work, recovered: Recovered, ids: Sequence[int] | None = None) -> None:
    model = work.model
    unfinished = [model.Status.QUEUED, model.Status.PROCESSING]
    held = {
        args.get(work.argument) for args in live_jobs(work.task_name).values_list("args", flat=True)
    }
    # A source read and searchable by its words whose summary, guide or embedding stopped
    # with its job is unfinished too (ingest/services/pipeline.py); the other kinds of work
    # have no such stages.
    still_embedding = Q(
        status=model.Status.READY, stage__in=["summarizing", "writing_guide", "embedding"]
    )
    pending = Q(status__in=unfinished) | still_embedding
    candidates = model.objects.filter(pending).exclude(pk__in=held)
    if ids is not None:
        candidates = candidates.filter(pk__in=ids)
    for pk in list(candidates.values_list("pk", flat=True)):
        with transaction.atomic():
            # Skip a row another transaction holds: a job starting on it right now.
            row = model.objects.select_for_update(skip_locked=True).filter(pending, pk=pk).first()
            if row is None or _is_held(work, pk):
                continue
            reason = _queue_again_or_reason(work, pk)
            if reason is None:
                # A source being embedded stays ready (searched by its words) while the job
                # that goes on with it waits.
                if row.status != model.Status.READY:
                    row.status = model.Status.QUEUED
                    row.stage = model.Stage.NONE
                    row.save(update_fields=["status", "stage", "updated_at"])
                recovered.queued.setdefault(work.model._meta.label, []).append(pk)
            else:
                _fail(row, reason)
                recovered.failed.setdefault(work.model._meta.label, []).append(pk)


def _queue_again_or_reason(work: Work, object_id: int) -> Text | None:
    """Queue the row's work again (None), or say why not: its attempts are spent."""
    last = jobs_of(work, object_id).order_by("-pk").first()
    if last is not None and last.status == "failed":
        if last.attempts < settings.JOB_RETRY_ATTEMPTS:
            _retry_now(last.pk)
            return None
        return Text(work.gave_up, attempts=last.attempts)
    if last is not None and last.status in {"cancelled", "aborted"}:
        return Text(CANCELLED)
    # No job at all (deleted from the queue), or one that ended without finishing the row.
    _release_dead_jobs(work, object_id)
    defer(work.task_name, {work.argument: object_id})
    return None


def _fail(row: BackgroundWork, reason: Text) -> None:
    if isinstance(row, Source):
        # Failed while being embedded: no chunk of a failed source stays half embedded.
        row.fail(reason, read=row.status == Source.Status.READY)
    else:
        row.fail(reason)


def _settle_reembed(recovered: Recovered) -> None:
    if not _reembed_task or not EmbeddingState.objects.exclude(target_model="").exists():
        return
    [REEMBED_TASK] = _reembed_task
    if live_jobs(REEMBED_TASK).exists():
        return
    with transaction.atomic():
        state = EmbeddingState.objects.select_for_update(skip_locked=True).filter(pk=1).first()
        if state is None or not state.target_model or live_jobs(REEMBED_TASK).exists():
            return
        last = ProcrastinateJob.objects.filter(task_name=REEMBED_TASK).order_by("-pk").first()
        if last is not None and last.status == "failed":
            if last.attempts < settings.JOB_RETRY_ATTEMPTS:
                _retry_now(last.pk)
                recovered.reembed = f"queued again (job {last.pk})"
            elif not recovered.reembed:
                # Nothing is lost: the finished batches stay; running the command again
                # resumes (retrieval/reembed.py).
                recovered.reembed = (
                    f"failed after {last.attempts} attempts (job {last.pk}); run "
                    f"manage.py reembed {state.target_model} again to resume"
                )
            return
        try:
            with transaction.atomic():
                job_id = defer(REEMBED_TASK, queueing_lock="reembed")
        except (exceptions.AlreadyEnqueued, exceptions.UniqueViolation):
            return  # one waits already
        recovered.reembed = f"queued again (job {job_id})"


def reembed_failed() -> str:
    """Why a re-embed under way has no job to finish it ("" if it has one or none is under
    way), for /healthz."""
    state = EmbeddingState.objects.exclude(target_model="").first()
    if state is None or not _reembed_task:
        return ""
    [REEMBED_TASK] = _reembed_task
    if live_jobs(REEMBED_TASK).exists():
        return ""
    last = ProcrastinateJob.objects.filter(task_name=REEMBED_TASK).order_by("-pk").first()
    if last is not None and last.status == "failed":
        return (
            f"the re-embed to {state.target_model} failed (job {last.pk}); run "
            f"manage.py reembed {state.target_model} again to resume"
        )
    return ""
