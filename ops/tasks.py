"""Upkeep jobs every worker can run (queue "maintenance"; every worker command listens to it)."""

from __future__ import annotations

from django.conf import settings
from procrastinate import JobContext
from procrastinate.contrib.django import app

from ops import recovery


# A worker killed mid-job (deploy, OOM, a machine lost) stops sending heartbeats and its job
# stays "doing" for ever; a job that ended without finishing its source (the database went
# away under it) leaves the source "processing". Both are put right every minute
# (ops/recovery.py): each of Loupe's jobs is safe to run again (a source's chunks are
# replaced in one transaction; a re-embed resumes).
@app.periodic(cron="* * * * *")
@app.task(queue="maintenance", queueing_lock="recover_stuck_work")
def recover_stuck_work(timestamp: int) -> None:
    recovery.recover_stuck_work()


# Finished jobs pile up in procrastinate_jobs (and their events); the admin needs recent
# ones, failures for longer.
@app.periodic(cron="17 * * * *")
@app.task(queue="maintenance", queueing_lock="delete_old_jobs", pass_context=True)
async def delete_old_jobs(context: JobContext, timestamp: int) -> None:
    manager = context.app.job_manager
    await manager.delete_old_jobs(nb_hours=settings.JOBS_KEEP_HOURS)
    await manager.delete_old_jobs(
        nb_hours=settings.JOBS_KEEP_FAILED_HOURS,
        include_failed=True,
        include_cancelled=True,
        include_aborted=True,
    )
