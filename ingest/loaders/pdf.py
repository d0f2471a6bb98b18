"""PDFs, one passage per page, read in one of three capture modes.

- `text`: the text layer only (PDFium; pypdf for a file PDFium cannot open); pages without a
  legible one are skipped.
- `vision`: every page rendered (pypdfium2, 150 dpi) and read by the vision reader.
- `auto`: the text layer where it is legible, the vision reader for the other pages.

Every page's text is cleaned (page_text.py), its running headers and footers removed
(furniture.py); contents and index pages are read from their text layer but not made
passages (navigation.py); the outline, or else numbered headings, gives every passage its
sections (ingest/structure.py), and the page labels their printed numbers. The text layer
is read by pdf_text_layer.py.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import User
from PIL import Image

from ingest.loaders.image import is_blank, with_blank_note
from ingest.loaders.navigation import is_navigation_page
from ingest.loaders.page_text import clean_page_text
from ingest.loaders.pdf_text_layer import TextLayer, is_readable, read_text_layer
from ingest.loaders.pdfium_process import CannotOpen
from ingest.loaders.pdfium_rendering import PageError, PageRenderer
from ingest.passages import LoaderError, Passage
from ingest.structure import (
    headings_in_text,
    sections_from_outline,
    starts_from_headings,
)
from providers import vision
from texts import Text

logger = logging.getLogger(__name__)

CAPTURE_MODES = ("text", "vision", "auto")
RENDER_DPI = 150
# A poster-sized page at 150 dpi would need gigabytes; such pages are rendered smaller.
RENDER_MAX_PIXELS = 25_000_000


# Called with (pages read, page count, whether the page was read as an image) after each
# page, so the worker can show how far it got.
PageProgress = Callable[[int, int, bool], None]


def load(
    path: Path,
    *,
    capture: str = "text",
    user: User | None = None,
    on_progress: PageProgress | None = None,
) -> tuple[list[Passage], int, Text | str, str]:
    """The passages of a PDF, its page count, which reader produced the text, and the title
    in its metadata where that is a real one ("" otherwise).

    `on_progress` hears of every page read. A page whose text layer is not readable counts
    as read in `text` mode (it is skipped) and only once the vision reader has read it in
    the others, so the count reaches the page count exactly when reading is done.
    """
    if capture not in CAPTURE_MODES:
        raise LoaderError(
            Text(
                "Unknown PDF capture mode %(mode)s; use one of %(modes)s.",
                mode=repr(capture),
                modes=", ".join(CAPTURE_MODES),
            )
        )
    page_count = 0

    def report(done: int, *, by_vision: bool = False) -> None:
        if on_progress is not None:
            on_progress(done, page_count, by_vision)

    def on_page(number: int, pages: int) -> None:
        nonlocal page_count
        page_count = pages
        if capture == "text":
            report(number)

    layer = read_text_layer(path, with_text=capture != "vision", on_page=on_page)
    page_count = layer.page_count
    texts = {number: text for number, text in layer.texts.items() if is_readable(text)}
    if capture == "text":
        if not texts:
            raise LoaderError(
                Text(
                    "None of this PDF's %(pages)s pages has a readable text layer (capture "
                    "mode 'text'): it is probably scanned or made of images. Add it with the "
                    "capture mode 'auto' or 'vision' to read its pages as images.",
                    pages=page_count,
                )
            )
        passages, navigation = _passages(texts, layer)
        return passages, page_count, with_navigation_note(layer.reader, navigation), layer.title
    if texts:
        report(len(texts) + len(layer.furniture_only))

    to_read = [
        number
        for number in range(1, page_count + 1)
        if number not in texts and number not in layer.furniture_only
    ]
    if len(to_read) > settings.PDF_VISION_MAX_PAGES:
        raise LoaderError(_too_many_pages(capture, len(to_read)))
    already = len(texts) + len(layer.furniture_only)
    images = _read_as_images(
        path, to_read, user=user, on_read=lambda read: report(already + read, by_vision=True)
    )
    report(page_count)
    if not texts and not images.seen:
        raise LoaderError(_nothing_read(page_count, capture, images.reader, len(images.blank)))
    passages, navigation = _passages(texts | images.seen, layer)
    reader = with_blank_note(_readers(layer, texts, images), len(images.blank))
    return passages, page_count, with_navigation_note(reader, navigation), layer.title


def _too_many_pages(capture: str, count: int) -> Text:
    if capture == "auto":
        return Text(
            "This PDF has %(pages)s pages without a readable text layer to read as "
            "images; Loupe reads at most %(max)s such pages per upload "
            "(PDF_VISION_MAX_PAGES). Split it into smaller files, or add it with the "
            "capture mode 'text'.",
            pages=count,
            max=settings.PDF_VISION_MAX_PAGES,
        )
    return Text(
        "This PDF has %(pages)s pages to read as images; Loupe reads at most %(max)s "
        "such pages per upload (PDF_VISION_MAX_PAGES). Split it into smaller files.",
        pages=count,
        max=settings.PDF_VISION_MAX_PAGES,
    )


@dataclass
class _Images:
    """What the vision reader made of the pages it was given."""

    seen: dict[int, str]  # page number: its text
    blank: list[int]  # pages not sent to it, blank
    reader: str  # the reader that read them


def _read_as_images(
    path: Path, to_read: list[int], *, user: User | None, on_read: Callable[[int], None]
) -> _Images:
    """The pages `to_read` rendered and read by the vision reader; `on_read` hears how many
    of them are done, before the first and after each."""
    images = _Images(seen={}, blank=[], reader=vision.active_reader())
    # A page that cannot be rendered is skipped by render_pages; counting by position in
    # `to_read` counts it as read all the same.
    position = {number: index for index, number in enumerate(to_read, start=1)}
    if to_read:
        # Said before the first image is read: a page's OCR takes seconds, and until then
        # the progress would still read as the text layer's.
        on_read(0)
    for number, image in render_pages(path, to_read):
        if is_blank(image):
            # Separator sheets and empty backs of scans: a call would cost money (or the
            # local OCR's seconds) to read nothing.
            images.blank.append(number)
        else:
            result = vision.read_image(image, user=user)
            images.reader = result.reader
            if result.text.strip():
                images.seen[number] = clean_page_text(result.text) or result.text
        on_read(position[number])
    return images


def _readers(layer: TextLayer, texts: dict[int, str], images: _Images) -> Text | str:
    """Which reader produced the text: the text layer's, the vision reader, or both."""
    if not texts:
        return images.reader
    if not images.seen:
        return layer.reader
    return Text.counted(
        "%(text_reader)s + %(vision_reader)s (%(count)s page)",
        "%(text_reader)s + %(vision_reader)s (%(count)s pages)",
        len(images.seen),
        text_reader=layer.reader,
        vision_reader=images.reader,
    )


def _nothing_read(page_count: int, capture: str, reader: str, blank: int) -> Text:
    if blank:
        return Text(
            "No text could be read from any of this PDF's %(pages)s pages (capture mode "
            "'%(mode)s', read by %(reader)s; %(blank)s blank, not sent to it): its pages "
            "look blank or hold pictures without words.",
            pages=page_count,
            mode=capture,
            reader=reader,
            blank=blank,
        )
    return Text(
        "No text could be read from any of this PDF's %(pages)s pages (capture mode "
        "'%(mode)s', read by %(reader)s): its pages look blank or hold pictures "
        "without words.",
        pages=page_count,
        mode=capture,
        reader=reader,
    )


def _passages(pages: dict[int, str], layer: TextLayer) -> tuple[list[Passage], int]:
    """The pages as passages in page order, with their sections and printed numbers, and how
    many contents or index pages were left out (kept when there is nothing else)."""
    body = {number: text for number, text in pages.items() if not is_navigation_page(text)}
    left_out = len(pages) - len(body) if body else 0
    pages = dict(sorted((body or pages).items()))
    if layer.outline:
        sections = sections_from_outline(layer.outline, pages)
    else:
        sections = {}
        carried: tuple[str, ...] = ()
        for number, text in pages.items():
            sections[number], carried = starts_from_headings(
                headings_in_text(text), carried=carried
            )
    passages = [
        Passage(
            text=text,
            page=number,
            page_label=layer.labels.get(number, ""),
            sections=sections.get(number, ()),
        )
        for number, text in pages.items()
    ]
    return passages, left_out


def with_navigation_note(reader: Text | str, left_out: int) -> Text | str:
    if not left_out:
        return reader
    return Text.counted(
        "%(reader)s; %(count)s contents or index page not searched",
        "%(reader)s; %(count)s contents or index pages not searched",
        left_out,
        reader=reader,
    )


def render_pages(path: Path, numbers: list[int]) -> Iterator[tuple[int, Image.Image]]:
    """Render the given pages (numbered from 1) upright, as the PDF's /Rotate says, in a
    child process: a crash or stall fails the source (LoaderError) and spares the worker."""
    if not numbers:
        return
    try:
        renderer = PageRenderer(path)
    except CannotOpen as exc:
        raise LoaderError(
            Text("This PDF's pages could not be rendered as images (%(error)s).", error=str(exc))
        ) from exc
    with renderer:
        for number in numbers:
            try:
                rendered = renderer.render(number, dpi=RENDER_DPI, max_pixels=RENDER_MAX_PIXELS)
            except PageError as exc:  # one broken page must not lose the others
                logger.warning("page %s of %s could not be rendered: %s", number, path.name, exc)
                continue
            yield number, rendered.image
