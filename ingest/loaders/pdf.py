"""PDFs, one passage per page, read in one of three capture modes.

- `text`: the text layer only (pypdf); pages without a legible one are skipped.
- `vision`: every page rendered (pypdfium2, 150 dpi) and read by the vision reader.
- `auto`: the text layer where it is legible, the vision reader for the other pages.
"""

from __future__ import annotations

import logging
import math
import threading
import unicodedata
from collections.abc import Callable, Iterator
from pathlib import Path

import pypdfium2 as pdfium
from django.conf import settings
from django.contrib.auth.models import User
from PIL import Image
from pypdf import PdfReader
from pypdf.errors import FileNotDecryptedError, PdfReadError

from ingest.loaders.image import is_blank, with_blank_note
from ingest.passages import LoaderError, Passage
from providers import vision
from texts import Text

logger = logging.getLogger(__name__)

MIN_VISIBLE_CHARS = 20
MIN_LETTER_SHARE = 0.6

CAPTURE_MODES = ("text", "vision", "auto")
TEXT_READER = Text("pypdf text layer")
RENDER_DPI = 150
# A poster-sized page at 150 dpi would need gigabytes; such pages are rendered smaller.
RENDER_MAX_PIXELS = 25_000_000

# Called with (pages read, page count, whether the page was read as an image) after each
# page, so the worker can show how far it got.
PageProgress = Callable[[int, int, bool], None]

# PDFium may not be called from two threads at once, not even for different documents.
_pdfium_lock = threading.Lock()


def is_legible(page_text: str) -> bool:
    """A page has a usable text layer: ≥ 20 visible characters, ≥ 60 % of them letters.

    Fonts without a Unicode map yield glyph codes and punctuation soup; that is not text.
    """
    visible = [ch for ch in page_text if not ch.isspace()]
    if len(visible) < MIN_VISIBLE_CHARS:
        return False
    letters = sum(ch.isalpha() for ch in visible)
    return letters / len(visible) >= MIN_LETTER_SHARE


def open_reader(path: Path) -> PdfReader:
    try:
        reader = PdfReader(path)
        if reader.is_encrypted:
            # Many PDFs are "encrypted" only to restrict printing and open with no password.
            try:
                opened = reader.decrypt("")
            except (NotImplementedError, PdfReadError) as exc:
                raise LoaderError(
                    Text(
                        "This PDF is encrypted in a way Loupe cannot open (%(error)s). "
                        "Upload a copy without password protection.",
                        error=str(exc),
                    )
                ) from exc
            if not opened:
                raise LoaderError(
                    Text(
                        "This PDF is protected by a password. Upload a copy without password "
                        "protection (for example, print it to a new PDF)."
                    )
                )
        return reader
    except LoaderError:
        raise
    except Exception as exc:  # pypdf raises many types for damaged files
        raise LoaderError(
            Text("This file could not be read as a PDF (%(error)s). Is it damaged?", error=str(exc))
        ) from exc


def count_pages(reader: PdfReader) -> int:
    try:
        page_count = len(reader.pages)
    except FileNotDecryptedError as exc:
        raise LoaderError(
            Text("This PDF is protected by a password; upload an unprotected copy.")
        ) from exc
    except Exception as exc:
        raise LoaderError(
            Text("The PDF's page list is damaged (%(error)s).", error=str(exc))
        ) from exc
    if page_count == 0:
        raise LoaderError(Text("This PDF has no pages."))
    if page_count > settings.PDF_MAX_PAGES:
        raise LoaderError(
            Text(
                "This PDF has %(pages)s pages; Loupe reads at most %(max)s pages per PDF "
                "(PDF_MAX_PAGES). Split it into smaller files.",
                pages=page_count,
                max=settings.PDF_MAX_PAGES,
            )
        )
    return page_count


def legible_text_layer(
    reader: PdfReader, path: Path, *, on_page: Callable[[int, int], None] | None = None
) -> dict[int, str]:
    """The text of every page (numbered from 1) whose text layer is legible.

    `on_page(number, legible pages so far)` is called after each page.
    """
    texts: dict[int, str] = {}
    for number, page in enumerate(reader.pages, start=1):
        try:
            page_text = page.extract_text() or ""
        except Exception as exc:  # one broken page must not lose the others
            logger.warning("page %s of %s could not be read: %s", number, path.name, exc)
            page_text = ""
        # NFKC folds ligatures ("ﬁ" → "fi") and presentation forms, so words match searches.
        page_text = unicodedata.normalize("NFKC", page_text).replace("\x00", "")
        if is_legible(page_text):
            texts[number] = page_text
        if on_page is not None:
            on_page(number, len(texts))
    return texts


def load(
    path: Path,
    *,
    capture: str = "text",
    user: User | None = None,
    on_progress: PageProgress | None = None,
) -> tuple[list[Passage], int, Text | str]:
    """The passages of a PDF, its page count, and which reader produced the text.

    `on_progress` hears of every page read. A page whose text layer is not legible counts
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
    reader = open_reader(path)
    page_count = count_pages(reader)

    def report(done: int, *, by_vision: bool = False) -> None:
        if on_progress is not None:
            on_progress(done, page_count, by_vision)

    def on_page(number: int, legible: int) -> None:
        report(number if capture == "text" else legible)

    texts = {} if capture == "vision" else legible_text_layer(reader, path, on_page=on_page)
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
        passages = [Passage(text=text, page=number) for number, text in texts.items()]
        return passages, page_count, TEXT_READER

    to_read = [number for number in range(1, page_count + 1) if number not in texts]
    if len(to_read) > settings.PDF_VISION_MAX_PAGES:
        if capture == "auto":
            too_many = Text(
                "This PDF has %(pages)s pages without a readable text layer to read as "
                "images; Loupe reads at most %(max)s such pages per upload "
                "(PDF_VISION_MAX_PAGES). Split it into smaller files, or add it with the "
                "capture mode 'text'.",
                pages=len(to_read),
                max=settings.PDF_VISION_MAX_PAGES,
            )
        else:
            too_many = Text(
                "This PDF has %(pages)s pages to read as images; Loupe reads at most %(max)s "
                "such pages per upload (PDF_VISION_MAX_PAGES). Split it into smaller files.",
                pages=len(to_read),
                max=settings.PDF_VISION_MAX_PAGES,
            )
        raise LoaderError(too_many)
    seen: dict[int, str] = {}
    blank: list[int] = []
    vision_reader = vision.active_reader()
    # A page that cannot be rendered is skipped by render_pages; counting by position in
    # `to_read` counts it as read all the same.
    position = {number: index for index, number in enumerate(to_read, start=1)}
    for number, image in render_pages(path, to_read):
        if is_blank(image):
            # Separator sheets and empty backs of scans: a call would cost money (or the
            # local OCR's seconds) to read nothing.
            blank.append(number)
        else:
            result = vision.read_image(image, user=user)
            vision_reader = result.reader
            if result.text.strip():
                seen[number] = result.text
        report(len(texts) + position[number], by_vision=True)
    report(page_count)
    if not texts and not seen:
        if blank:
            unread = Text(
                "No text could be read from any of this PDF's %(pages)s pages (capture mode "
                "'%(mode)s', read by %(reader)s; %(blank)s blank, not sent to it): its pages "
                "look blank or hold pictures without words.",
                pages=page_count,
                mode=capture,
                reader=vision_reader,
                blank=len(blank),
            )
        else:
            unread = Text(
                "No text could be read from any of this PDF's %(pages)s pages (capture mode "
                "'%(mode)s', read by %(reader)s): its pages look blank or hold pictures "
                "without words.",
                pages=page_count,
                mode=capture,
                reader=vision_reader,
            )
        raise LoaderError(unread)
    passages = [Passage(text=text, page=number) for number, text in sorted((texts | seen).items())]
    if not texts:
        return passages, page_count, with_blank_note(vision_reader, len(blank))
    if not seen:
        return passages, page_count, with_blank_note(TEXT_READER, len(blank))
    both = Text.counted(
        "%(text_reader)s + %(vision_reader)s (%(count)s page)",
        "%(text_reader)s + %(vision_reader)s (%(count)s pages)",
        len(seen),
        text_reader=TEXT_READER,
        vision_reader=vision_reader,
    )
    return passages, page_count, with_blank_note(both, len(blank))


def render_pages(path: Path, numbers: list[int]) -> Iterator[tuple[int, Image.Image]]:
    """Render the given pages (numbered from 1) upright, as the PDF's /Rotate says."""
    if not numbers:
        return
    try:
        with _pdfium_lock:
            document = pdfium.PdfDocument(path)
    except pdfium.PdfiumError as exc:
        raise LoaderError(
            Text("This PDF's pages could not be rendered as images (%(error)s).", error=str(exc))
        ) from exc
    try:
        for number in numbers:
            try:
                with _pdfium_lock:
                    image = _render(document, number - 1)
            except Exception as exc:  # one broken page must not lose the others
                logger.warning("page %s of %s could not be rendered: %s", number, path.name, exc)
                continue
            yield number, image
    finally:
        with _pdfium_lock:
            document.close()


def _render(document: pdfium.PdfDocument, index: int) -> Image.Image:
    page = document[index]
    try:
        width, height = page.get_size()
        scale = RENDER_DPI / 72
        if width * height * scale * scale > RENDER_MAX_PIXELS:
            scale = math.sqrt(RENDER_MAX_PIXELS / (width * height))
        # convert() copies the pixels out of PDFium's buffer, which is freed with the bitmap.
        return page.render(scale=scale).to_pil().convert("RGB")
    finally:
        page.close()
