"""The pages of a source as they are read, written to it for the page to show."""

from __future__ import annotations

import time

from ingest.loaders.pdf import PageProgress
from library.models import Source
from providers import vision
from texts import columns


def page_reporter(source: Source) -> PageProgress:
    """What a loader calls after each page it read."""
    # While pages are read as images, `reader` names who reads them (the local OCR or a
    # vision model at an API) for the progress label; the finished source gets the final
    # reader with its other fields.
    images_reader = vision.active_reader()
    last_written = [0.0]

    def report(done: int, total: int, by_vision: bool) -> None:
        # A text layer reads in milliseconds a page and the page polls every 2 s: an UPDATE
        # (and its commit) per page would cost more than reading the pages. At most four a
        # second, and always the last page.
        now = time.monotonic()
        if not by_vision and done < total and now - last_written[0] < 0.25:
            return
        last_written[0] = now
        if by_vision:
            source.report_progress(
                stage=Source.Stage.READING_IMAGES,
                done=done,
                total=total,
                **columns("reader", images_reader),
            )
        else:
            source.report_progress(stage=Source.Stage.READING, done=done, total=total)

    return report
