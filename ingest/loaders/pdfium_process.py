"""Reading a PDF's text layer with PDFium in a child process (pdfium_text.py), so that a
file that crashes or hangs PDFium fails its source instead of killing or holding the worker.

A child costs a process start (a tenth of a second on a quiet machine, more under load),
paid before it is needed: a process keeps children waiting for the next file
(waiting_child.py). The pages are shared among READERS children, one per core; their text
comes through pipes and is reported as it arrives, for the source's progress.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings

from ingest.loaders.waiting_child import WaitingChild
from ingest.passages import LoaderError
from ingest.structure import OutlineEntry
from texts import Text

logger = logging.getLogger(__name__)

SCRIPT = Path(__file__).with_name("pdfium_text.py")

_waiting = WaitingChild(text=True)

# Children that read a PDF's pages at once, each its share (pdfium_text.py): the extraction
# is most of reading a text PDF, and on two cores two children take about half as long.
# More than four would mostly wait for the one process that
# cleans the pages they send.
READERS = max(1, min(4, len(os.sched_getaffinity(0))))


class CannotOpen(Exception):
    """PDFium cannot open the file (damaged, or protected by a password); PDFium's words."""


@dataclass
class RawLayer:
    """What the child read: the page count, and where it is in bounds, the rest."""

    page_count: int
    outline: list[OutlineEntry] = field(default_factory=list)
    labels: dict[int, str] = field(default_factory=dict)
    # The metadata's /Title as it stands, junk and all (pdf_title.py judges it).
    title: str = ""
    # Numbered from 1; every page once the child has finished.
    texts: dict[int, str] = field(default_factory=dict)


def read(
    path: Path,
    *,
    with_text: bool,
    on_page: Callable[[int, int], None] | None = None,
    each_page: Callable[[str], str] = str,
) -> RawLayer:
    """Read the PDF's page count, outline, labels and (`with_text`) pages in children (the
    pages by READERS of them at once); `each_page` is applied to each page's text as it
    arrives.

    Raises CannotOpen when PDFium cannot open it, LoaderError when a child crashed, hung
    past PDF_READ_SECONDS, or stopped early. A page count out of bounds comes back with
    nothing else: the caller refuses it."""
    parts = READERS if with_text else 1
    # Children started after the last read, their imports done (waiting_child.py).
    children = [_waiting.take(SCRIPT) for _ in range(parts)]
    for part, child in enumerate(children):
        _ask(child.process, path=path, with_text=with_text, part=part, parts=parts)
    # A timer, not a timeout on each read: a page that never comes must not hold us.
    timed_out = threading.Event()

    def stop() -> None:
        timed_out.set()
        for child in children:
            child.process.kill()

    timer = threading.Timer(settings.PDF_READ_SECONDS, stop)
    timer.start()
    try:
        layer = _read_output([child.process for child in children], path, on_page, each_page)
        returncodes = [child.process.wait() for child in children]
    finally:
        timer.cancel()
        said = []
        for child in children:
            if child.process.poll() is None:
                child.process.kill()
                child.process.wait()
            child.errors.seek(0)
            said.append(child.errors.read().decode(errors="replace").strip())
            child.end()
        _waiting.refill(SCRIPT, count=READERS)
    if timed_out.is_set():
        logger.warning("PDFium took over %s s on %s; stopped", settings.PDF_READ_SECONDS, path.name)
        raise LoaderError(
            Text(
                "The PDF reader took longer than %(seconds)s seconds on this file and was "
                "stopped (PDF_READ_SECONDS). The file may be damaged or built to stall readers.",
                seconds=settings.PDF_READ_SECONDS,
            )
        )
    crashed = next((index for index, code in enumerate(returncodes) if code != 0), None)
    if crashed is not None or layer is None:
        how = describe_exit(returncodes[crashed or 0])
        logger.warning(
            "PDFium's child ended with %s on %s: %s", how, path.name, said[crashed or 0][-500:]
        )
        raise LoaderError(
            Text(
                "The PDF reader crashed on this file (%(how)s). The file may be damaged or "
                "built to attack PDF readers; Loupe cannot read it.",
                how=how,
            )
        )
    in_bounds = 0 < layer.page_count <= settings.PDF_MAX_PAGES
    if with_text and in_bounds and len(layer.texts) != layer.page_count:
        raise LoaderError(
            Text(
                "The PDF reader stopped after %(read)s of %(pages)s pages.",
                read=len(layer.texts),
                pages=layer.page_count,
            )
        )
    return layer


def _ask(
    process: subprocess.Popen[str], *, path: Path, with_text: bool, part: int, parts: int
) -> None:
    """Tell a child which PDF to read, and which share of its pages (`part` of `parts`)."""
    asked = {
        "path": str(path),
        "max_pages": settings.PDF_MAX_PAGES,
        "text": with_text,
        "part": part,
        "parts": parts,
    }
    stdin = process.stdin
    assert stdin is not None
    try:
        stdin.write(json.dumps(asked) + "\n")
        stdin.close()
    except BrokenPipeError:
        pass  # it died; its exit says how


def _read_output(
    children: list[subprocess.Popen[str]],
    path: Path,
    on_page: Callable[[int, int], None] | None,
    each_page: Callable[[str], str],
) -> RawLayer | None:
    """The layer from the children's lines as they come, each page from the child that
    read it; None if one said nothing whole."""
    heads = []
    for child in children:
        assert child.stdout is not None
        head = child.stdout.readline()
        if not head.endswith("\n"):
            return None  # it ended (crashed, or was stopped) before its first line
        heads.append(json.loads(head))
    document = heads[0]
    if "cannot_open" in document:
        raise CannotOpen(document["cannot_open"])
    layer = RawLayer(page_count=document["pages"], title=document.get("title", ""))
    if document.get("outline_error"):
        logger.warning("the outline could not be read (%s)", document["outline_error"])
    if document.get("labels_error"):
        logger.warning("the page labels could not be read (%s)", document["labels_error"])
    layer.outline = [
        OutlineEntry(level=level, title=title, page=page)
        for level, title, page in document.get("outline", [])
    ]
    layer.labels = {int(number): label for number, label in document.get("labels", {}).items()}
    if not 0 < layer.page_count <= settings.PDF_MAX_PAGES:
        return layer
    for number in range(1, layer.page_count + 1):
        # Page n is the ((n - 1) // parts)-th line after the head of child (n - 1) % parts.
        stdout = children[(number - 1) % len(children)].stdout
        assert stdout is not None
        line = stdout.readline()
        if not line.endswith("\n"):
            break  # cut off: the child died, or was stopped
        page = json.loads(line)
        if page.get("error"):
            logger.warning("page %s of %s could not be read: %s", number, path.name, page["error"])
        layer.texts[number] = each_page(page["text"])
        if on_page is not None:
            on_page(number, layer.page_count)
    return layer


def describe_exit(returncode: int) -> str:
    if returncode < 0:
        try:
            return f"signal {signal.Signals(-returncode).name}"
        except ValueError:
            return f"signal {-returncode}"
    return f"exit status {returncode}"
