from __future__ import annotations

from procrastinate.contrib.django import app

from retrieval import reembed


# Its own queue: a long re-embed does not hold up sources waiting on "ingest" when the
# workers are split by queue. Killed, it is re-queued by ops.tasks.retry_stalled_jobs and
# resumes: finished batches are kept.
@app.task(queue="reembed")
def reembed_chunks() -> None:
    reembed.run_reembed()
