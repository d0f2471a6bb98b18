from __future__ import annotations

from procrastinate.contrib.django import app

from ingest import services


@app.task(queue="ingest")
def ingest_source(*, source_id: int) -> None:
    services.process_source(source_id=source_id)
