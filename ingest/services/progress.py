"""What the worker is doing, written to the source as it goes, for the page to show."""

from __future__ import annotations

import time

from ingest.loaders.pdf import PageProgress
from library.models import Source
from providers import vision
from texts import Text, columns


def report_progress(
    source: Source,
    *,
    stage: str,
    done: int = 0,
    total: int = 0,
    reader: Text | str | None = None,
) -> None:
    """Say what the worker is doing, in a short UPDATE of its own: it commits at once (no
    transaction is open here), so the page shows it while the source processes."""
    fields: dict[str, object] = {"stage": stage, "progress_done": done, "progress_total": total}
    if reader is not None:
        fields.update(columns("reader", reader))
    Source.objects.filter(pk=source.pk).update(**fields)


def page_reporter(source: Source) -> PageProgress:
    # While pages are read as images, `reader` names who reads them (the local OCR or a
    # vision model at an API) for the progress label; the finished source gets the final
    # reader with its other fields.
    images_reader = vision.active_reader()
    last_written = [0.0]

    def report(done: int, total: int, by_vision: bool) -> None:
        # A text layer reads in milliseconds a page and the page polls every 2 s: an UPDATE
        # (and its commit) per page was a fifth of a long PDF's time outside pypdf. At most
        # four a second, and always the last page.
        now = time.monotonic()
        if not by_vision and done < total and now - last_written[0] < 0.25:
            return
        last_written[0] = now
        if by_vision:
            report_progress(
                source,
                stage=Source.Stage.READING_IMAGES,
                done=done,
                total=total,
                reader=images_reader,
            )
        else:
            report_progress(source, stage=Source.Stage.READING, done=done, total=total)

    return report
