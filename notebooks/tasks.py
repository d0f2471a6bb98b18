from __future__ import annotations

from procrastinate.contrib.django import app

from notebooks import guides


# One cheap model call; a failure falls back to the outline's guide, so no retries.
@app.task(queue="ingest")
def write_guide(*, source_id: int) -> None:
    guides.write_guide(source_id=source_id)
