from __future__ import annotations

from procrastinate import JobContext
from procrastinate.contrib.django import app

from ingest import services
from library.models import Source


@app.task(queue="ingest")
def ingest_source(*, source_id: int) -> None:
    if not Source.objects.filter(pk=source_id).exists():
        return  # deleted while it waited in the queue
    services.process_source(source_id=source_id)


# A worker killed mid-job (deploy, OOM, Ctrl-C twice) stops sending heartbeats and its job
# stays "doing" forever. Re-queue such jobs: processing a source again is safe, since its
# chunks are replaced in one transaction.
@app.periodic(cron="* * * * *")
@app.task(queue="ingest", queueing_lock="retry_stalled_jobs", pass_context=True)
async def retry_stalled_jobs(context: JobContext, timestamp: int) -> None:
    for job in await app.job_manager.get_stalled_jobs():
        await app.job_manager.retry_job(job)
