"""A job whose worker died (no heartbeat) is queued again by the periodic upkeep task, and
finished jobs are cleaned up."""

from __future__ import annotations

import pytest
from django.core.files.base import ContentFile
from django.db import connection
from procrastinate.contrib.django.models import ProcrastinateJob

from ingest.services import add_source
from library.models import Source
from ops.tasks import delete_old_jobs, recover_stuck_work
from ops.tests.worker_traces import worker_dies_holding_the_job
from ops.worker import drain_queue


def run_now(task) -> None:
    """Run a periodic upkeep task at once (a worker's periodic deferrer may have queued it
    already: its queueing lock allows one waiting job)."""
    waiting = ProcrastinateJob.objects.filter(task_name=task.name, status="todo")
    if not waiting.exists():
        task.defer(timestamp=0)
    drain_queue("maintenance")
    assert not waiting.exists()


@pytest.mark.django_db(transaction=True)
def test_a_job_left_running_by_a_dead_worker_is_retried_and_finishes(fake_openai, notebook):
    drain_queue("ingest")  # jobs other tests left behind come first in the queue
    added = add_source(
        owner=notebook.owner,
        notebook=notebook,
        upload=ContentFile(b"A worker died here. " * 30, name="stalled.txt"),
    )
    job = ProcrastinateJob.objects.get(args={"source_id": added.source.pk})
    worker_dies_holding_the_job(job.pk)
    assert ProcrastinateJob.objects.get(pk=job.pk).status == "doing"
    drain_queue("ingest")
    assert ProcrastinateJob.objects.get(pk=job.pk).status == "doing"  # nobody takes it

    run_now(recover_stuck_work)

    assert ProcrastinateJob.objects.get(pk=job.pk).status == "todo"
    drain_queue("ingest")
    assert ProcrastinateJob.objects.get(pk=job.pk).status == "succeeded"
    source = Source.objects.get(pk=added.source.pk)
    assert source.status == Source.Status.READY, source.error


@pytest.mark.django_db(transaction=True)
def test_old_finished_jobs_are_deleted_and_recent_or_failed_ones_kept(
    fake_openai, notebook, settings
):
    settings.JOBS_KEEP_HOURS = 24
    settings.JOBS_KEEP_FAILED_HOURS = 24 * 30
    sources = [
        add_source(
            owner=notebook.owner,
            notebook=notebook,
            upload=ContentFile(f"Document number {n}. ".encode() * 20, name=f"{n}.txt"),
        ).source
        for n in range(3)
    ]
    drain_queue("ingest")
    old, recent, failed = (
        ProcrastinateJob.objects.get(args={"source_id": source.pk}) for source in sources
    )
    with connection.cursor() as cursor:
        # Age the first and the third; mark the third failed, as a crashed job would be.
        cursor.execute(
            "UPDATE procrastinate_events SET at = now() - interval '2 days' WHERE job_id = ANY(%s)",
            [[old.pk, failed.pk]],
        )
        cursor.execute("UPDATE procrastinate_jobs SET status = 'failed' WHERE id = %s", [failed.pk])

    run_now(delete_old_jobs)

    remaining = set(ProcrastinateJob.objects.values_list("pk", flat=True))
    assert old.pk not in remaining
    assert {recent.pk, failed.pk} <= remaining
