"""PDFium's rendering of a PDF's pages as images, run as a child process of its own, for the
same reason as pdfium_text.py: a hostile file that crashes or stalls PDFium while drawing a
page must kill only this child, never the worker or the web server
(`ingest/loaders/pdfium_rendering.py` runs it).

It imports nothing but the standard library, pypdfium2 and Pillow (no Django). Then it
reads the file's path, one JSON line on its standard input ({"path"}): so it can be started,
its imports done, before there is a file to draw (the web server keeps one waiting). It
opens the file once and prints one JSON line: the page count, or why it cannot be opened.
Then it answers requests, one JSON line each on its standard input ({"page", "dpi", "max_pixels",
and optionally "quote" and "near"}), with one JSON line ({"width", "height", "bytes",
"boxes"}, or {"error"}) followed by that many bytes of the page's RGB pixels. It ends when
its input ends. One child draws one file.

The quote's boxes are found here because they need PDFium's text page: the quote was cut
from the page's cleaned text (ingest/loaders/page_text.py), while the boxes come from
PDFium's own text layer; the two disagree on spaces, line breaks and hyphens far more often
than on letters. So both sides are compared as their letters and digits only, casefolded:
"mod-\\nern  ﬁsh" and "modern fish" meet as "modernfish".

    python -I pdfium_pages.py   (then {"path": FILE} on its input)
"""

from __future__ import annotations

import ctypes
import json
import math
import sys
import unicodedata
from typing import Any, BinaryIO

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

# How much of each end of the quote must match when the whole does not.
ANCHOR_CHARS = 24


def _emit(out: BinaryIO, record: dict[str, Any], pixels: bytes = b"") -> None:
    out.write(json.dumps(record).encode() + b"\n")
    out.write(pixels)
    out.flush()


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
) -> list[list[int]]:
    """The quote's rectangles as [left, top, right, bottom] in image pixels."""
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
    return [box for rect in rects if (box := _to_pixels(page, size, rect))]


def _to_pixels(
    page: pdfium.PdfPage, size: tuple[int, int], rect: tuple[float, float, float, float]
) -> list[int]:
    """A rectangle in PDF page space (points, origin bottom left) as image pixels, or []
    when it has no area. PDFium maps the corners itself, so the page's /Rotate and crop box
    are honoured."""
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
    box = [min(xs), min(ys), max(xs), max(ys)]
    if box[2] <= box[0] or box[3] <= box[1]:
        return []
    return box


def _render(document: pdfium.PdfDocument, request: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
    page = document[request["page"] - 1]
    try:
        width, height = page.get_size()  # as displayed, /Rotate applied
        scale = request["dpi"] / 72
        if width * height * scale * scale > request["max_pixels"]:
            scale = math.sqrt(request["max_pixels"] / (width * height))
        # convert() copies the pixels out of PDFium's buffer, which is freed with the bitmap.
        image = page.render(scale=scale).to_pil().convert("RGB")
        quote = request.get("quote", "")
        boxes = _quote_boxes(page, image.size, quote, request.get("near")) if quote.strip() else []
    finally:
        page.close()
    pixels = image.tobytes()
    record = {"width": image.width, "height": image.height, "bytes": len(pixels), "boxes": boxes}
    return record, pixels


def main() -> None:
    out = sys.stdout.buffer
    first = sys.stdin.readline()
    if not first:
        return  # a waiting renderer that was never given a file
    try:
        document = pdfium.PdfDocument(json.loads(first)["path"])
    except pdfium.PdfiumError as exc:
        _emit(out, {"cannot_open": str(exc)})
        return
    page_count = len(document)
    _emit(out, {"pages": page_count})
    for line in sys.stdin:
        request = json.loads(line)
        if not 1 <= request["page"] <= page_count:
            _emit(out, {"error": f"The PDF has no page {request['page']}."})
            continue
        try:
            record, pixels = _render(document, request)
        except Exception as exc:  # one broken page must not lose the others
            _emit(out, {"error": str(exc) or type(exc).__name__})
            continue
        _emit(out, record, pixels)
    document.close()


if __name__ == "__main__":
    main()
