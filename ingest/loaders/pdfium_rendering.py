"""Rendering a PDF's pages with PDFium in a child process (pdfium_pages.py), for the pages
read as images (pdf.py) and the cited page shown with its highlight (ingest/page_images.py).

No PDFium runs in Loupe's own processes, so there is no lock to share: each renderer is a
process of its own. One child serves all the pages of one file, asked one page at a time: a
page the vision reader takes minutes over must not count against the renderer's time. Each
page (and the opening) must come back within PDF_READ_SECONDS, or the child is stopped.

A renderer made `warm` (the web server's, for one cited page at a time) takes a child
started beforehand, waiting for its file, and leaves another waiting for the next
(waiting_child.py).
"""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, NoReturn

from django.conf import settings
from PIL import Image

from ingest.loaders.pdfium_process import CannotOpen, describe_exit
from ingest.loaders.waiting_child import Child, WaitingChild
from ingest.passages import LoaderError
from texts import Text

logger = logging.getLogger(__name__)

SCRIPT = Path(__file__).with_name("pdfium_pages.py")


class PageError(Exception):
    """PDFium could not draw this page (the others may still be drawn); PDFium's words."""


@dataclass(frozen=True)
class RenderedImage:
    image: Image.Image
    # The quote's rectangles in image pixels: (left, top, right, bottom), origin top left.
    boxes: list[tuple[int, int, int, int]]


class PageRenderer:
    """A child process that renders the pages of the PDF at `path`; use it as a context
    manager. Raises CannotOpen when PDFium cannot open the file, and LoaderError, with a
    reason a person can read, when the child crashed or stalled."""

    def __init__(self, path: Path, *, warm: bool = False) -> None:
        self.path = path
        self._warm = warm
        self._child = _waiting.take(SCRIPT) if warm else Child.start(SCRIPT, text=False)
        self.page_count = 0
        try:
            self._send({"path": str(path)})
            head = self._answer(page=None)
        except BaseException:
            self.close()
            raise
        if "cannot_open" in head:
            self.close()
            raise CannotOpen(head["cannot_open"])
        self.page_count = int(head["pages"])

    def __enter__(self) -> PageRenderer:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def render(
        self, page: int, *, dpi: int, max_pixels: int, quote: str = "", near: float | None = None
    ) -> RenderedImage:
        """Page `page` (from 1), upright as the PDF's /Rotate says, at `dpi` or smaller to
        stay within `max_pixels`; with the boxes of `quote` where it is found on the page.
        Raises PageError when PDFium cannot draw this page."""
        request = {"page": page, "dpi": dpi, "max_pixels": max_pixels, "quote": quote}
        if near is not None:
            request["near"] = near
        self._send(request)
        record = self._answer(page=page)
        if "error" in record:
            raise PageError(record["error"])
        size = (int(record["width"]), int(record["height"]))
        pixels = self._read_exactly(int(record["bytes"]), page=page)
        boxes = [(left, top, right, bottom) for left, top, right, bottom in record["boxes"]]
        return RenderedImage(image=Image.frombytes("RGB", size, pixels), boxes=boxes)

    def close(self) -> None:
        self._child.end()
        if self._warm:
            _waiting.refill(SCRIPT)

    def _send(self, record: dict[str, Any]) -> None:
        assert self._child.process.stdin is not None
        try:
            self._child.process.stdin.write(json.dumps(record).encode() + b"\n")
            self._child.process.stdin.flush()
        except BrokenPipeError:
            pass  # it died; _answer says how

    def _answer(self, *, page: int | None) -> dict[str, Any]:
        """The child's next line, within PDF_READ_SECONDS."""
        assert self._child.process.stdout is not None
        line = self._within_time(self._child.process.stdout.readline, page=page)
        if not line.endswith(b"\n"):
            self._crashed(page)
        answer: dict[str, Any] = json.loads(line)
        return answer

    def _read_exactly(self, count: int, *, page: int) -> bytes:
        assert self._child.process.stdout is not None
        stdout = self._child.process.stdout
        data = self._within_time(lambda: stdout.read(count), page=page)
        if len(data) != count:
            self._crashed(page)
        return data

    def _within_time(self, read: Any, *, page: int | None) -> bytes:
        # A timer, not a timeout on the pipe: a page that never comes must not hold us.
        timed_out = threading.Event()

        def stop() -> None:
            timed_out.set()
            self._child.process.kill()

        timer = threading.Timer(settings.PDF_READ_SECONDS, stop)
        timer.start()
        try:
            data: bytes = read()
        finally:
            timer.cancel()
        if timed_out.is_set():
            self._child.process.wait()
            logger.warning(
                "PDFium took over %s s rendering page %s of %s; stopped",
                settings.PDF_READ_SECONDS,
                page,
                self.path.name,
            )
            raise LoaderError(
                Text(
                    "Rendering this PDF's pages as images took longer than %(seconds)s seconds "
                    "and was stopped (PDF_READ_SECONDS). The file may be damaged or built to "
                    "stall readers.",
                    seconds=settings.PDF_READ_SECONDS,
                )
            )
        return data

    def _crashed(self, page: int | None) -> NoReturn:
        returncode = self._child.process.wait()
        self._child.errors.seek(0)
        said = self._child.errors.read().decode(errors="replace").strip()
        logger.warning(
            "PDFium's renderer ended with %s on page %s of %s: %s",
            describe_exit(returncode),
            page,
            self.path.name,
            said[-500:],
        )
        raise LoaderError(
            Text(
                "The PDF renderer crashed on this file (%(how)s) while drawing its pages as "
                "images. The file may be damaged or built to attack PDF readers; Loupe cannot "
                "read it.",
                how=describe_exit(returncode),
            )
        )


_waiting = WaitingChild(text=False)
