"""A PDF's text layer: read by PDFium in a child process (pdfium_process.py; pypdf for a
file PDFium cannot open), each page cleaned (page_text.py), its running headers and footers
removed (furniture.py); and whether a page's text is legible enough to keep instead of
reading the page as an image."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from pypdf import PdfReader
from pypdf.errors import FileNotDecryptedError, PdfReadError

from ingest.loaders import pdfium_process
from ingest.loaders.furniture import strip_running_lines
from ingest.loaders.navigation import is_navigation_page
from ingest.loaders.page_text import clean_page_text
from ingest.loaders.pdf_title import title_from_metadata
from ingest.loaders.pdfium_process import CannotOpen
from ingest.passages import LoaderError
from ingest.structure import OutlineEntry, sane_outline
from texts import Text

logger = logging.getLogger(__name__)

MIN_VISIBLE_CHARS = 20
MIN_LETTER_SHARE = 0.6
_NON_LETTERS = re.compile(r"[\W\d_]+")
TEXT_READER = Text("PDF text layer")
FALLBACK_READER = Text("pypdf text layer")


def is_legible(page_text: str) -> bool:
    """A page has a usable text layer: ≥ 20 visible characters, ≥ 60 % of them letters.

    Fonts without a Unicode map yield glyph codes and punctuation soup; that is not text.
    """
    # Counted by C loops, not a loop over characters in Python: a long PDF's pages are
    # millions of characters. str.split() and the regex's \s agree on whitespace, and
    # removing the runs of non-letters leaves the letters ([^\W\d_]); half the time of
    # listing every character with findall.
    visible = len("".join(page_text.split()))
    if visible < MIN_VISIBLE_CHARS:
        return False
    return len(_NON_LETTERS.sub("", page_text)) / visible >= MIN_LETTER_SHARE


def open_reader(path: Path) -> PdfReader:
    """The fallback reader, for files PDFium cannot open."""
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
                raise LoaderError(PASSWORD_PROTECTED)
        return reader
    except LoaderError:
        raise
    except Exception as exc:  # pypdf raises many types for damaged files
        raise LoaderError(
            Text("This file could not be read as a PDF (%(error)s). Is it damaged?", error=str(exc))
        ) from exc


PASSWORD_PROTECTED = Text(
    "This PDF is protected by a password. Upload a copy without password "
    "protection (for example, print it to a new PDF)."
)


def check_page_count(page_count: int) -> int:
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
    return check_page_count(page_count)


@dataclass
class TextLayer:
    """What a PDF's text layer gives, before any page is read as an image."""

    page_count: int
    reader: Text
    # Every page's cleaned text (numbered from 1), running headers and footers removed;
    # "" for a page without one. Empty in `vision` mode, which reads no text layer.
    texts: dict[int, str] = field(default_factory=dict)
    outline: list[OutlineEntry] = field(default_factory=list)
    # The printed page numbers, where the PDF labels its pages (/PageLabels).
    labels: dict[int, str] = field(default_factory=dict)
    # The title in the PDF's metadata, where it is a real one (pdf_title.py); else "".
    title: str = ""
    # Pages whose text layer is legible but holds only page furniture (a running header, a
    # page number, a stray word): neither a passage nor a page for the vision reader.
    furniture_only: set[int] = field(default_factory=set)


def read_text_layer(
    path: Path, *, with_text: bool = True, on_page: Callable[[int, int], None] | None = None
) -> TextLayer:
    """Open the PDF (PDFium, in a child process; pypdf for a file PDFium cannot open) and
    read its pages' text, outline and page labels. `on_page(number, page count)` hears of
    each page read."""
    try:
        # Each page cleaned as it arrives, while the child reads the next.
        raw = pdfium_process.read(
            path, with_text=with_text, on_page=on_page, each_page=clean_page_text
        )
    except CannotOpen as exc:
        if "password" in str(exc).lower():
            raise LoaderError(PASSWORD_PROTECTED) from exc
        logger.info("PDFium cannot open %s (%s); reading it with pypdf", path.name, exc)
        return _read_with_pypdf(path, with_text=with_text, on_page=on_page)
    page_count = check_page_count(raw.page_count)
    outline = sane_outline(raw.outline, page_count=page_count)
    layer = TextLayer(
        page_count=page_count,
        reader=TEXT_READER,
        outline=outline,
        labels=raw.labels,
        title=title_from_metadata(raw.title),
    )
    if with_text:
        layer.texts = _without_furniture(raw.texts, outline)
        layer.furniture_only = _furniture_only(raw.texts, layer.texts)
    return layer


def _read_with_pypdf(
    path: Path, *, with_text: bool, on_page: Callable[[int, int], None] | None
) -> TextLayer:
    reader = open_reader(path)
    page_count = count_pages(reader)
    layer = TextLayer(page_count=page_count, reader=FALLBACK_READER)
    if with_text:
        raw: dict[int, str] = {}
        for number, page in enumerate(reader.pages, start=1):
            try:
                raw[number] = page.extract_text() or ""
            except Exception as exc:  # one broken page must not lose the others
                logger.warning("page %s of %s could not be read: %s", number, path.name, exc)
                raw[number] = ""
            if on_page is not None:
                on_page(number, page_count)
        cleaned = {number: clean_page_text(text) for number, text in raw.items()}
        layer.texts = _without_furniture(cleaned, [])
        layer.furniture_only = _furniture_only(cleaned, layer.texts)
    return layer


def _without_furniture(texts: dict[int, str], outline: list[OutlineEntry]) -> dict[int, str]:
    """The cleaned pages without their running headers and footers."""
    with_text = {number: text for number, text in texts.items() if text}
    stripped = strip_running_lines(with_text, outline_titles=[entry.title for entry in outline])
    return {number: stripped.get(number, "") for number in texts}


def _furniture_only(texts: dict[int, str], stripped: dict[int, str]) -> set[int]:
    """The pages whose text layer is legible only with its furniture: what is left without
    it is too little to read (a running header, "2" and "CONTENTS"). OCR would read the same
    furniture back, and as a passage it is junk that answers cite."""
    return {
        number
        for number, text in texts.items()
        if is_legible(text) and not is_readable(stripped.get(number, ""))
    }


def is_readable(page_text: str) -> bool:
    """Whether the text layer is worth keeping instead of reading the page as an image: it
    is legible, or it is a contents or index page, whose dot leaders and page numbers fail
    the letter-share rule but which no OCR would read better."""
    return is_legible(page_text) or is_navigation_page(page_text)
