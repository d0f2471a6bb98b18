"""Slide decks (.pptx, .pptm): one page per slide, labelled "slide n", its notes with it.

Each slide is a passage of its own (page n), so a citation names the slide. Its title is the
passage's section; then the text of its shapes in the order the slide stores them (grouped
shapes too), a table as Markdown rows, a chart as its title and series; then the speaker
notes, after "Speaker notes:". Hidden slides are read as well: they are part of the deck a
person sends. Pictures are not read (a picture's text would need OCR, not done here).
"""

from __future__ import annotations

import zipfile

from lxml import etree

from ingest.loaders.blocks import DocumentText, clean, markdown_row, table_rows
from ingest.loaders.containers import relationships, relationships_by_type, xml_part
from ingest.passages import LoaderError, Passage
from texts import Text

P = "{http://schemas.openxmlformats.org/presentationml/2006/main}"
A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
C = "{http://schemas.openxmlformats.org/drawingml/2006/chart}"
MAIN_TYPES = (
    "application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml",
    "application/vnd.ms-powerpoint.presentation.macroEnabled.main+xml",
    "application/vnd.openxmlformats-officedocument.presentationml.slideshow.main+xml",
    "application/vnd.ms-powerpoint.slideshow.macroEnabled.main+xml",
)
MAX_SLIDES = 2000
_TITLE_TYPES = {"title", "ctrTitle"}
# Placeholders whose text the slide master fills in, not the author.
_FURNITURE_TYPES = {"sldNum", "dt", "ftr", "sldImg", "hdr"}


def load(archive: zipfile.ZipFile, main_part: str, name: str) -> tuple[list[Passage], int]:
    presentation = xml_part(archive, main_part, name=name)
    if presentation is None:
        raise LoaderError(Text("“%(name)s” has no slides.", name=name))
    targets = relationships(archive, main_part, name=name)
    slide_parts = [
        targets[slide.get(f"{R}id", "")]
        for slide in presentation.iter(f"{P}sldId")
        if slide.get(f"{R}id", "") in targets
    ]
    if len(slide_parts) > MAX_SLIDES:
        raise LoaderError(
            Text(
                "“%(name)s” has %(count)s slides; Loupe reads decks of up to %(most)s.",
                name=name,
                count=len(slide_parts),
                most=MAX_SLIDES,
            )
        )
    out = DocumentText()
    for number, part in enumerate(slide_parts, start=1):
        slide = xml_part(archive, part, name=name)
        if slide is None:
            continue
        title, lines = _slide_text(archive, slide, part, name)
        out.set_path((title,) if title else ())
        out.page, out.page_label = number, f"slide {number}"
        for line in lines:
            out.paragraph(line)
        notes = []
        for notes_part in relationships_by_type(archive, part, name=name).get("notesSlide", []):
            tree = xml_part(archive, notes_part, name=name)
            if tree is not None:
                notes.extend(_shape_lines(archive, tree, notes_part, name, notes=True)[1])
        if notes:
            out.paragraph("Speaker notes:")
            for line in notes:
                out.paragraph(line)
        out.end_passage()
    return out.finish(), len(slide_parts)


def _slide_text(
    archive: zipfile.ZipFile, slide: etree._Element, part: str, name: str
) -> tuple[str, list[str]]:
    title, lines = _shape_lines(archive, slide, part, name, notes=False)
    if title and lines and clean(lines[0]) == title:
        return title, lines
    return title, ([title, *lines] if title else lines)


def _shape_lines(
    archive: zipfile.ZipFile, tree: etree._Element, part: str, name: str, *, notes: bool
) -> tuple[str, list[str]]:
    """(the title, the text blocks) of a slide's or a notes page's shapes."""
    tree_root = tree.find(f"{P}cSld/{P}spTree")
    if tree_root is None:
        return "", []
    title = ""
    lines: list[str] = []
    charts = relationships(archive, part, name=name)
    for shape in tree_root.iter(f"{P}sp", f"{P}graphicFrame"):
        placeholder = shape.find(f"{P}nvSpPr/{P}nvPr/{P}ph")
        kind = placeholder.get("type", "") if placeholder is not None else ""
        if kind in _FURNITURE_TYPES or (notes and kind == "sldImg"):
            continue
        if shape.tag == f"{P}sp":
            body = shape.find(f"{P}txBody")
            if body is None:
                continue
            paragraphs = [_paragraph(p) for p in body.findall(f"{A}p")]
            text = "\n".join(p for p in paragraphs if clean(p))
            if kind in _TITLE_TYPES and not title:
                title = clean(text)
            elif text:
                lines.append(text)
            continue
        table = shape.find(f".//{A}tbl")
        if table is not None:
            rows = table_rows(
                [
                    [
                        "\n".join(_paragraph(p) for p in cell.iter(f"{A}p"))
                        for cell in row.findall(f"{A}tc")
                        for _ in range(_span(cell))
                    ]
                    for row in table.findall(f"{A}tr")
                ]
            )
            lines.extend(markdown_row(row) for row in rows)
            continue
        chart = shape.find(f".//{C}chart")
        if chart is not None and chart.get(f"{R}id", "") in charts:
            lines.extend(_chart_lines(archive, charts[chart.get(f"{R}id", "")], name))
    return title, lines


def _span(cell: etree._Element) -> int:
    """A merged cell's text is spelled out in each column it spans; the cells it covers
    (hMerge) are left empty in the XML and skipped here."""
    if cell.get("hMerge") == "1" or cell.get("vMerge") == "1":
        return 0
    value = cell.get("gridSpan", "1")
    return min(int(value), 64) if value.isdigit() else 1


def _paragraph(paragraph: etree._Element) -> str:
    pieces = []
    for element in paragraph.iter(f"{A}t", f"{A}br"):
        pieces.append("\n" if element.tag == f"{A}br" else element.text or "")
    return "".join(pieces)


def _chart_lines(archive: zipfile.ZipFile, part: str, name: str) -> list[str]:
    """A chart's title, and each series' name with its categories and values."""
    tree = xml_part(archive, part, name=name)
    if tree is None:
        return []
    lines = []
    title = tree.find(f".//{C}title")
    if title is not None:
        text = clean(" ".join(t.text or "" for t in title.iter(f"{A}t")))
        if text:
            lines.append(text)
    for series in tree.iter(f"{C}ser"):
        label = clean(" ".join(v.text or "" for v in series.iterfind(f"{C}tx//{C}v")))
        categories = [clean(v.text or "") for v in series.iterfind(f"{C}cat//{C}pt/{C}v")]
        values = [clean(v.text or "") for v in series.iterfind(f"{C}val//{C}pt/{C}v")]
        pairs = (
            [f"{c}: {v}" for c, v in zip(categories, values, strict=False)]
            if categories
            else values
        )
        if pairs:
            lines.append(f"{label}: " + "; ".join(pairs) if label else "; ".join(pairs))
    return lines
