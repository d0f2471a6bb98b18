"""Waiting for sources to be read and embedded, and saying where each stands (the ingest
command, the evaluation)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from django.conf import settings

from library.models import Source
from ops import recovery
from ops.waiting import Waiting, wait_for


def wait_for_sources(
    source_ids: Iterable[int],
    *,
    poll_seconds: float = 1.0,
    idle_seconds: float | None = None,
    on_poll: Callable[[list[Source]], None] | None = None,
) -> list[Source]:
    """Block until every source is ready or failed. A worker may be processing them;
    without one, their own jobs (and only theirs) run in this process (ops/waiting.py).

    Raises GaveUp when nothing moved for `idle_seconds` (default WAIT_IDLE_SECONDS).
    """
    return wait_for(
        Waiting(
            work=recovery.work_for(Source),
            ids=list(source_ids),
            is_done=lambda source: source.is_finished,
            describe=lambda source: f"{source_name(source)} is {source_progress(source)}",
            on_progress=on_poll,
            idle_seconds=settings.WAIT_IDLE_SECONDS if idle_seconds is None else idle_seconds,
            poll_seconds=poll_seconds,
        )
    )


def source_name(source: Source) -> str:
    return source.filename or source.url or f"source {source.pk}"


def source_progress(source: Source) -> str:
    """Where a source stands, saying what its numbers count (pages or chunks). A ready
    source still has a stage while its summary, guide and vectors are made."""
    ready = source.status == Source.Status.READY
    if not (source.status == Source.Status.PROCESSING or (ready and source.stage)):
        return str(source.status)
    state = "ready, searchable by its words" if ready else "processing"
    done, total = source.progress_done, source.progress_total
    stage = source.stage
    if stage in {Source.Stage.READING, Source.Stage.READING_IMAGES} and total:
        # The pages without a text layer are read last, as images (OCR or vision).
        how = "; reading pages as images" if stage == Source.Stage.READING_IMAGES else ""
        return f"{state}: read {done}/{total} pages{how}"
    if stage == Source.Stage.EMBEDDING and total:
        return f"{state}: embedded {done}/{total} chunks"
    label = Source.Stage(stage).label.lower() if stage else "starting"
    return f"{state}: {label}"
