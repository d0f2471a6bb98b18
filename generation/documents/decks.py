"""A slide deck's exports: PPTX (python-pptx) and PDF (ReportLab), 16:9, a title slide then one
page per slide; each slide's bullets keep their [n] and the passages they name become its
footnotes (source, page); the speaker notes go in the PPTX's notes. The same drawing fonts
serve the PDF and the video's slides (fonts())."""

from __future__ import annotations

import io
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from generation.citations import MARKER_RE, _numbers

# 16:9 at PowerPoint's default widescreen size, in points (13.333 × 7.5 in).
PAGE_WIDTH, PAGE_HEIGHT = 960.0, 540.0
MARGIN = 48.0
ACCENT = (0x1F, 0x4E, 0x79)  # the headings' blue
MUTED = (0x55, 0x5F, 0x6B)  # footnotes
# Debian's DejaVu covers Latin Extended (Polish, Czech …); ReportLab's own Vera, always
# there, covers Western European letters.
DEJAVU = Path("/usr/share/fonts/truetype/dejavu")


@dataclass(frozen=True)
class Fonts:
    regular: Path
    bold: Path


@lru_cache(maxsize=1)
def fonts() -> Fonts:
    if (DEJAVU / "DejaVuSans.ttf").exists() and (DEJAVU / "DejaVuSans-Bold.ttf").exists():
        return Fonts(DEJAVU / "DejaVuSans.ttf", DEJAVU / "DejaVuSans-Bold.ttf")
    import reportlab

    folder = Path(reportlab.__file__).parent / "fonts"
    return Fonts(folder / "Vera.ttf", folder / "VeraBd.ttf")


def cited_numbers(texts: list[str]) -> list[int]:
    """The [n] the texts name, in order of first appearance."""
    found: list[int] = []
    for text in texts:
        for match in MARKER_RE.finditer(text):
            for number in _numbers(match.group(1)):
                if number not in found:
                    found.append(number)
    return found


def footnotes(slide: dict[str, Any], places: dict[int, str]) -> list[str]:
    """'[n] Source, p. 12' for each passage the slide's bullets cite."""
    return [
        f"[{number}] {places[number]}"
        for number in cited_numbers(slide["bullets"])
        if number in places
    ]


def pptx_bytes(data: dict[str, Any], places: dict[int, str]) -> bytes:
    """The deck as a PPTX; `places` names each [n]'s passage ("Manual, p. 12")."""
    from pptx import Presentation
    from pptx.dml.color import RGBColor
    from pptx.util import Pt

    deck = Presentation()
    deck.slide_width, deck.slide_height = Pt(PAGE_WIDTH), Pt(PAGE_HEIGHT)
    title_layout, content_layout = deck.slide_layouts[0], deck.slide_layouts[1]
    first = deck.slides.add_slide(title_layout)
    _place(first.shapes.title, MARGIN, 170, PAGE_WIDTH - 2 * MARGIN, 140)
    first.shapes.title.text = data["title"]
    subtitle = first.placeholders[1]
    subtitle.element.getparent().remove(subtitle.element)  # nothing to say under the title
    for slide in data["slides"]:
        page = deck.slides.add_slide(content_layout)
        title, body = page.shapes.title, page.placeholders[1]
        _place(title, MARGIN, 24, PAGE_WIDTH - 2 * MARGIN, 70)
        title.text = slide["heading"]
        for paragraph in title.text_frame.paragraphs:
            for run in paragraph.runs:
                run.font.size = Pt(30)
                run.font.bold = True
                run.font.color.rgb = RGBColor(*ACCENT)
        notes = footnotes(slide, places)
        body_bottom = PAGE_HEIGHT - MARGIN - 16 * len(notes)
        _place(body, MARGIN, 104, PAGE_WIDTH - 2 * MARGIN, body_bottom - 104)
        frame = body.text_frame
        frame.word_wrap = True
        for index, bullet in enumerate(slide["bullets"]):
            paragraph = frame.paragraphs[0] if index == 0 else frame.add_paragraph()
            paragraph.text = bullet
        # The size at which every bullet fits the box, measured with the drawing font.
        frame.fit_text(font_file=str(fonts().regular), max_size=20)
        if notes:
            box = page.shapes.add_textbox(
                Pt(MARGIN),
                Pt(PAGE_HEIGHT - MARGIN - 16 * len(notes) + 8),
                Pt(PAGE_WIDTH - 2 * MARGIN),
                Pt(16 * len(notes)),
            )
            box.text_frame.word_wrap = True
            for index, line in enumerate(notes):
                paragraph = (
                    box.text_frame.paragraphs[0] if index == 0 else box.text_frame.add_paragraph()
                )
                paragraph.text = line
                for run in paragraph.runs:
                    run.font.size = Pt(10)
                    run.font.color.rgb = RGBColor(*MUTED)
        if slide.get("notes"):
            page.notes_slide.notes_text_frame.text = slide["notes"]
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


def _place(shape: Any, left: float, top: float, width: float, height: float) -> None:
    from pptx.util import Pt

    shape.left, shape.top, shape.width, shape.height = Pt(left), Pt(top), Pt(width), Pt(height)


def pdf_bytes(data: dict[str, Any], places: dict[int, str]) -> bytes:
    """The deck as a PDF, one 16:9 page a slide, its text selectable."""
    from reportlab.lib.colors import Color
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont
    from reportlab.pdfgen.canvas import Canvas
    from reportlab.platypus import Frame, Paragraph

    chosen = fonts()
    for name, path in (("LoupeSans", chosen.regular), ("LoupeSans-Bold", chosen.bold)):
        if name not in pdfmetrics.getRegisteredFontNames():
            pdfmetrics.registerFont(TTFont(name, str(path)))
    accent = Color(*(channel / 255 for channel in ACCENT))
    muted = Color(*(channel / 255 for channel in MUTED))
    heading = ParagraphStyle("heading", fontName="LoupeSans-Bold", fontSize=28, leading=34)
    heading.textColor = accent
    title_style = ParagraphStyle("title", parent=heading, fontSize=40, leading=48)
    bullet_style = ParagraphStyle(
        "bullet", fontName="LoupeSans", fontSize=19, leading=25, leftIndent=22, bulletIndent=4
    )
    bullet_style.spaceAfter = 10
    note_style = ParagraphStyle("note", fontName="LoupeSans", fontSize=10, leading=13)
    note_style.textColor = muted

    out = io.BytesIO()
    canvas = Canvas(out, pagesize=(PAGE_WIDTH, PAGE_HEIGHT), pageCompression=1)
    canvas.setTitle(data["title"])
    canvas.setCreator("Loupe")
    width = PAGE_WIDTH - 2 * MARGIN
    Frame(MARGIN, 150, width, 240, showBoundary=0).addFromList(
        [Paragraph(_escaped(data["title"]), title_style)], canvas
    )
    canvas.showPage()
    for slide in data["slides"]:
        notes = footnotes(slide, places)
        notes_height = 13 * len(notes) + (12 if notes else 0)
        Frame(MARGIN, PAGE_HEIGHT - 110, width, 86, showBoundary=0).addFromList(
            [Paragraph(_escaped(slide["heading"]), heading)], canvas
        )
        body_height = PAGE_HEIGHT - 120 - MARGIN - notes_height
        bullets = _fitted(slide["bullets"], bullet_style, width, body_height)
        Frame(MARGIN, MARGIN + notes_height, width, body_height, showBoundary=0).addFromList(
            bullets, canvas
        )
        if notes:
            Frame(MARGIN - 6, MARGIN - 6, width + 12, notes_height, showBoundary=0).addFromList(
                [Paragraph(_escaped(line), note_style) for line in notes], canvas
            )
        canvas.showPage()
    canvas.save()
    return out.getvalue()


def _fitted(texts: list[str], style: Any, width: float, height: float) -> list[Any]:
    """The bullets as paragraphs, in the largest size down to 10 pt at which all fit: a frame
    leaves out what does not fit, and a long bullet must not vanish."""
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.platypus import Paragraph

    size = style.fontSize
    while True:
        fitted = ParagraphStyle(
            f"bullet-{size}",
            parent=style,
            fontSize=size,
            leading=size * 1.3,
            spaceAfter=size / 2,
            bulletFontName=style.fontName,
            bulletFontSize=size,
        )
        paragraphs = [Paragraph(_escaped(text), fitted, bulletText="•") for text in texts]
        # A frame pads by 6 pt on each side.
        needed = sum(
            paragraph.wrap(width - 12, height)[1] + fitted.spaceAfter for paragraph in paragraphs
        )
        if needed <= height - 12 or size <= 10:
            return paragraphs
        size -= 1


def _escaped(text: str) -> str:
    """Text for ReportLab's Paragraph, which reads a little XML."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
