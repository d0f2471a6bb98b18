from __future__ import annotations

from django.conf import settings
from procrastinate import JobContext
from procrastinate.contrib.django import app

from ingest import direct_uploads, services
from library.models import Source
from ops.database import wait_for_database
from ops.jobs import TRANSIENT_RETRY


# A model server that is down or rate-limiting, or a database that went away, fails the
# attempt, not the source: the job runs again later (ops/jobs.py) and only the last attempt
# marks the source failed. Stalled jobs (a worker killed mid-job) and sources left unfinished
# by a job that ended are put right by ops.tasks.recover_stuck_work.
# A long source is read at once and embedded in slices: each job embeds for a few seconds
# and queues the rest behind any source added meanwhile, so a small upload never waits for
# a big one (services.process_source).
@app.task(queue="ingest", retry=TRANSIENT_RETRY, pass_context=True)
def ingest_source(context: JobContext, *, source_id: int) -> None:
    # The first job after a database restart waits for it rather than failing at once.
    wait_for_database(seconds=settings.DATABASE_WAIT_SECONDS)
    if not Source.objects.filter(pk=source_id).exists():
        return  # deleted while it waited in the queue
    services.process_source(
        source_id=source_id,
        raise_transient=TRANSIENT_RETRY.retries_left(context.job),
        slice_seconds=settings.INGEST_SLICE_SECONDS,
    )


# A direct upload reserved and never confirmed (the browser closed, the PUT failed) leaves
# a row and perhaps an object in the bucket: both go once its signed URL has expired.
@app.periodic(cron="*/10 * * * *")
@app.task(queue="maintenance", queueing_lock="delete_abandoned_uploads")
def delete_abandoned_uploads(timestamp: int) -> None:
    direct_uploads.delete_abandoned_uploads()
