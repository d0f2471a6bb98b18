from __future__ import annotations

from django.conf import settings
from procrastinate.contrib.django import app

from ops.database import wait_for_database
from ops.jobs import TRANSIENT_RETRY
from retrieval import reembed


# Its own queue: a long re-embed does not hold up sources waiting on "ingest" when the
# workers are split by queue. Killed, or stopped by a model server or database that went
# away, it runs again (ops.tasks.recover_stuck_work, ops.jobs) and resumes: finished batches
# are kept.
@app.task(queue="reembed", retry=TRANSIENT_RETRY)
def reembed_chunks() -> None:
    wait_for_database(seconds=settings.DATABASE_WAIT_SECONDS)
    reembed.run_reembed()
