"""A PDF page as a PNG, with the text of a citation's quote highlighted on it: what the
passage panel and the API show under a citation.

PDFium draws the page and finds the quote's boxes in a child process
(ingest/loaders/pdfium_rendering.py, which also says how a quote is matched to the page), so
a hostile file that crashes or stalls PDFium fails this one picture, not the web server.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

from django.db.models import Max
from PIL import Image, ImageDraw

from citations.models import CitedPassage
from ingest.loaders.pdfium_process import CannotOpen
from ingest.loaders.pdfium_rendering import PageError, PageRenderer
from ingest.passages import LoaderError
from library.files import local_copy
from library.models import Chunk, Source

DPI = 120
# A poster-sized page is drawn smaller rather than as a giant image.
MAX_PIXELS = 6_000_000
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


def cited_page_png(source: Source, page: int, cited: CitedPassage | None = None) -> bytes:
    """Page `page` of a PDF source as PNG bytes; when `cited` (a citation the reader may
    see) cites this very page, its quote highlighted. PageNotRendered for a source that is
    no stored PDF, a page it does not have, or a file PDFium cannot draw."""
    if source.kind != Source.Kind.PDF or not source.file or not source.page_count:
        raise PageNotRendered("This source has no pages to show.")
    if not 1 <= page <= source.page_count:
        raise PageNotRendered(f"The PDF has no page {page}.")
    quote, near = "", None
    if cited is not None and cited.source_id == source.pk and cited.page == page:
        quote, near = cited.quote, quote_position(cited)
    with local_copy(source.file) as path:
        return render_page_png(path, page, quote=quote, near=near)


def quote_position(cited: CitedPassage) -> float | None:
    """Where on its page (0 to 1) the quote was extracted, to pick the right one of a
    sentence the page repeats."""
    chunk = cited.chunk
    if chunk is None or (offset := chunk.text.find(cited.quote)) < 0:
        return None
    page_chunks = Chunk.objects.filter(source_id=chunk.source_id, page=chunk.page)
    page_length = page_chunks.aggregate(length=Max("char_end"))["length"]
    return (chunk.char_start + offset) / page_length if page_length else None


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
    try:
        # Warm: a child started after the last picture, its imports done, draws this one.
        with PageRenderer(path, warm=True) as renderer:
            if not 1 <= page <= renderer.page_count:
                raise PageNotRendered(f"The PDF has no page {page}.")
            rendered = renderer.render(page, dpi=DPI, max_pixels=MAX_PIXELS, quote=quote, near=near)
    except (CannotOpen, PageError) as exc:
        raise PageNotRendered(str(exc)) from exc
    except LoaderError as exc:  # the renderer crashed or stalled; it has said how in the log
        raise PageNotRendered(str(exc)) from exc
    boxes = [
        Box(left=left, top=top, right=right, bottom=bottom)
        for left, top, right, bottom in rendered.boxes
    ]
    image = rendered.image
    if boxes:
        image = _draw_highlights(image, boxes)
    return RenderedPage(image=image, boxes=boxes)


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
