"""A PDF page as a PNG, with the text of a citation's quote highlighted on it.

The quote was cut from the page's cleaned text (ingest/loaders/page_text.py), while the boxes
come from PDFium's own text layer; the two disagree on spaces, line breaks and hyphens far
more often than on letters. So both sides are compared as their letters and digits only,
casefolded: "mod-\\nern  ﬁsh" and "modern fish" meet as "modernfish".
"""

from __future__ import annotations

import ctypes
import io
import math
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
from PIL import Image, ImageDraw

# One lock per process: PDFium may not run in two threads at once, ingest included.
from ingest.loaders.pdf import _pdfium_lock as pdfium_lock

DPI = 120
# A poster-sized page is drawn smaller rather than as a giant image.
MAX_PIXELS = 6_000_000
# How much of each end of the quote must match when the whole does not.
ANCHOR_CHARS = 24
HIGHLIGHT_RGBA = (255, 214, 0, 90)
OUTLINE_RGBA = (214, 150, 0, 200)


class PageNotRendered(Exception):
    """The file is not a PDF PDFium can open, or the page is not in it."""


@dataclass(frozen=True)
class Box:
    """A highlight rectangle in image pixels (origin top left)."""

    left: int
    top: int
    right: int
    bottom: int


@dataclass(frozen=True)
class RenderedPage:
    image: Image.Image
    boxes: list[Box]


def render_page_png(path: Path, page: int, *, quote: str = "", near: float | None = None) -> bytes:
    """Page `page` (from 1) of the PDF at `path` as PNG bytes, the quote highlighted
    where it can be found on the page (and nothing highlighted where it cannot)."""
    rendered = render_page(path, page, quote=quote, near=near)
    buffer = io.BytesIO()
    rendered.image.save(buffer, format="PNG")
    return buffer.getvalue()


def render_page(
    path: Path, page: int, *, quote: str = "", near: float | None = None
) -> RenderedPage:
    with pdfium_lock:
        try:
            document = pdfium.PdfDocument(path)
        except pdfium.PdfiumError as exc:
            raise PageNotRendered(str(exc)) from exc
        try:
            if not 1 <= page <= len(document):
                raise PageNotRendered(f"The PDF has no page {page}.")
            pdf_page = document[page - 1]
            try:
                width, height = pdf_page.get_size()  # as displayed, /Rotate applied
                scale = DPI / 72
                if width * height * scale * scale > MAX_PIXELS:
                    scale = math.sqrt(MAX_PIXELS / (width * height))
                # convert() copies the pixels out of PDFium's buffer, freed with the bitmap.
                image = pdf_page.render(scale=scale).to_pil().convert("RGB")
                boxes = _quote_boxes(pdf_page, image.size, quote, near) if quote.strip() else []
            finally:
                pdf_page.close()
        finally:
            document.close()
    if boxes:
        image = _draw_highlights(image, boxes)
    return RenderedPage(image=image, boxes=boxes)


def _compact(text: str) -> tuple[str, list[int]]:
    """The letters and digits of `text`, NFKC-normalised and casefolded, with the index
    in `text` each one came from."""
    letters: list[str] = []
    origins: list[int] = []
    for index, char in enumerate(text):
        for folded in unicodedata.normalize("NFKC", char).casefold():
            if folded.isalnum():
                letters.append(folded)
                origins.append(index)
    return "".join(letters), origins


def find_quote(page_text: str, quote: str, *, near: float | None = None) -> tuple[int, int] | None:
    """The span [start, end) of `page_text` that holds `quote`, compared on letters and
    digits only; failing that, the stretch from the quote's first to its last
    ANCHOR_CHARS letters. None when neither is on the page.

    `near` (0 to 1) is where on the page the quote was extracted from: a sentence that
    recurs on the page is highlighted where it was cited, not at its first occurrence.
    """
    haystack, origins = _compact(page_text)
    needle, _ = _compact(quote)
    if not needle:
        return None
    spans = [(start, start + len(needle)) for start in _occurrences(haystack, needle)]
    if not spans and len(needle) >= 2 * ANCHOR_CHARS:
        head, tail = needle[:ANCHOR_CHARS], needle[-ANCHOR_CHARS:]
        for start in _occurrences(haystack, head):
            # The tail must close the quote at about its length, not anywhere further down.
            limit = start + len(needle) + len(needle) // 4 + ANCHOR_CHARS
            tail_at = haystack.find(tail, start + ANCHOR_CHARS, limit)
            if tail_at >= 0:
                spans.append((start, tail_at + ANCHOR_CHARS))
    if not spans:
        return None
    start, end = spans[0]
    if near is not None:
        start, end = min(spans, key=lambda span: abs(span[0] / len(haystack) - near))
    return origins[start], origins[end - 1] + 1


def _occurrences(haystack: str, needle: str) -> list[int]:
    found = []
    start = haystack.find(needle)
    while start >= 0:
        found.append(start)
        start = haystack.find(needle, start + 1)
    return found


def _page_chars(textpage: pdfium.PdfTextPage) -> str:
    """The text page one character per PDFium character index, so a span of this string
    is a span of indices PDFium can draw rectangles for."""
    count = textpage.count_chars()
    chars = []
    for index in range(count):
        code = pdfium_c.FPDFText_GetUnicode(textpage, index)
        # Surrogates and control codes (PDFium's generated hyphens, line breaks) hold no letter.
        chars.append(chr(code) if 32 <= code < 0xD800 or 0xE000 <= code < 0x110000 else " ")
    return "".join(chars)


def _quote_boxes(
    page: pdfium.PdfPage, size: tuple[int, int], quote: str, near: float | None
) -> list[Box]:
    textpage = page.get_textpage()
    try:
        span = find_quote(_page_chars(textpage), quote, near=near)
        if span is None:
            return []
        start, end = span
        # PDFium merges the characters of the span into one rectangle per line run.
        rects = [textpage.get_rect(i) for i in range(textpage.count_rects(start, end - start))]
    finally:
        textpage.close()
    return [box for rect in rects if (box := _to_pixels(page, size, rect)) is not None]


def _to_pixels(
    page: pdfium.PdfPage, size: tuple[int, int], rect: tuple[float, float, float, float]
) -> Box | None:
    """A rectangle in PDF page space (points, origin bottom left) as image pixels.
    PDFium maps the corners itself, so the page's /Rotate and crop box are honoured."""
    left, bottom, right, top = rect
    width, height = size
    xs, ys = [], []
    for x, y in ((left, bottom), (right, top)):
        device_x, device_y = ctypes.c_int(), ctypes.c_int()
        pdfium_c.FPDF_PageToDevice(
            page, 0, 0, width, height, 0, x, y, ctypes.byref(device_x), ctypes.byref(device_y)
        )
        xs.append(min(max(device_x.value, 0), width))
        ys.append(min(max(device_y.value, 0), height))
    box = Box(left=min(xs), top=min(ys), right=max(xs), bottom=max(ys))
    if box.right <= box.left or box.bottom <= box.top:
        return None
    return box


def _draw_highlights(image: Image.Image, boxes: list[Box]) -> Image.Image:
    overlay = Image.new("RGBA", image.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(overlay)
    for box in boxes:
        # A little air around the glyphs, which PDFium boxes tightly.
        draw.rectangle(
            (box.left - 2, box.top - 2, box.right + 2, box.bottom + 2),
            fill=HIGHLIGHT_RGBA,
            outline=OUTLINE_RGBA,
        )
    return Image.alpha_composite(image.convert("RGBA"), overlay).convert("RGB")
