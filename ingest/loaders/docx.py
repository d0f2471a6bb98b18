"""Word documents (.docx, .docm): the body in reading order, read from its XML.

The XML is read directly rather than through python-docx, which leaves out the text of
tracked insertions, footnotes and comments. What a person reads is what Word shows with every
tracked change accepted:

- tracked insertions are kept and deletions (and text moved away) are dropped;
- a footnote or endnote follows the paragraph that refers to it, as "[^n]: text";
- a comment follows the paragraph it is anchored in, as "[Comment, author: text]";
- the page headers and footers, said once each, close the document;
- field codes, the fallback copies of text boxes and the macros of a .docm are never read.

Headings are the paragraphs whose style (or outline level) makes them one: "Title" opens the
document, "Heading 1" its chapters, and so on; they give the section path of every passage.
"""

from __future__ import annotations

import re
import zipfile

from lxml import etree

from ingest.loaders.blocks import DocumentText, clean
from ingest.loaders.containers import relationships_by_type, xml_part
from ingest.passages import LoaderError, Passage
from texts import Text

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
MAIN_TYPES = (
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml",
    "application/vnd.ms-word.document.macroEnabled.main+xml",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.template.main+xml",
    "application/vnd.ms-word.template.macroEnabledTemplate.main+xml",
)
_HEADING_STYLE = re.compile(r"^(?:heading|überschrift|titre|titolo|título|kop)\s*(\d)$", re.I)
# Text that lives in these elements is not what the document shows.
_SKIPPED = {f"{W}delText", f"{W}instrText", f"{W}delInstrText", f"{MC}Fallback"}
_REMOVED = {f"{W}del", f"{W}moveFrom"}


def load(archive: zipfile.ZipFile, main_part: str, name: str) -> list[Passage]:
    body = xml_part(archive, main_part, name=name)
    if body is None:
        raise LoaderError(Text("“%(name)s” has no document text.", name=name))
    related = relationships_by_type(archive, main_part, name=name)
    reader = _Reader(
        styles=_heading_styles(archive, related, name),
        notes=_notes(archive, related, ("footnotes", "endnotes"), ("footnote", "endnote"), name),
        comments=_notes(archive, related, ("comments",), ("comment",), name),
        authors=_comment_authors(archive, related, name),
    )
    found = body.find(f"{W}body")
    if found is None:
        raise LoaderError(Text("“%(name)s” has no document text.", name=name))
    reader.blocks(found)
    margins: list[str] = []
    for kind in ("header", "footer"):
        for part in related.get(kind, []):
            tree = xml_part(archive, part, name=name)
            if tree is not None:
                margins.extend(_paragraph_text(p) for p in tree.iter(f"{W}p"))
    seen: set[str] = set()
    for line in margins:
        line = clean(line)
        if line and line not in seen:
            seen.add(line)
            reader.out.paragraph(line)
    return reader.out.finish()


def _heading_styles(
    archive: zipfile.ZipFile, related: dict[str, list[str]], name: str
) -> dict[str, int]:
    """Style id → heading level (0 for the title)."""
    levels: dict[str, int] = {}
    for part in related.get("styles", []):
        tree = xml_part(archive, part, name=name)
        if tree is None:
            continue
        for style in tree.iter(f"{W}style"):
            style_id = style.get(f"{W}styleId", "")
            style_name = style.find(f"{W}name")
            shown = style_name.get(f"{W}val", "") if style_name is not None else style_id
            outline = style.find(f"{W}pPr/{W}outlineLvl")
            match = _HEADING_STYLE.match(shown.strip()) or _HEADING_STYLE.match(style_id)
            if shown.lower() == "title" or style_id.lower() == "title":
                levels[style_id] = 0
            elif match:
                levels[style_id] = int(match.group(1))
            elif outline is not None and outline.get(f"{W}val", "").isdigit():
                level = int(outline.get(f"{W}val", "9"))
                if level < 9:
                    levels[style_id] = level + 1
    return levels


def _notes(
    archive: zipfile.ZipFile,
    related: dict[str, list[str]],
    kinds: tuple[str, ...],
    tags: tuple[str, ...],
    name: str,
) -> dict[tuple[str, str], str]:
    """(tag, id) → the text of each footnote, endnote or comment."""
    found: dict[tuple[str, str], str] = {}
    for kind in kinds:
        for part in related.get(kind, []):
            tree = xml_part(archive, part, name=name)
            if tree is None:
                continue
            for element_tag in tags:
                for note in tree.iter(f"{W}{element_tag}"):
                    text = " ".join(
                        filter(None, (clean(_paragraph_text(p)) for p in note.iter(f"{W}p")))
                    )
                    if text:
                        found[(element_tag, note.get(f"{W}id", ""))] = text
    return found


def _comment_authors(
    archive: zipfile.ZipFile, related: dict[str, list[str]], name: str
) -> dict[str, str]:
    authors: dict[str, str] = {}
    for part in related.get("comments", []):
        tree = xml_part(archive, part, name=name)
        if tree is not None:
            for comment in tree.iter(f"{W}comment"):
                authors[comment.get(f"{W}id", "")] = comment.get(f"{W}author", "")
    return authors


def _paragraph_text(paragraph: etree._Element) -> str:
    """The text a paragraph shows, tracked changes accepted."""
    pieces: list[str] = []
    _collect(paragraph, pieces)
    return "".join(pieces)


def _collect(element: etree._Element, pieces: list[str]) -> None:
    for child in element:
        tag = child.tag
        if tag in _SKIPPED or tag in _REMOVED or not isinstance(tag, str):
            continue
        if tag == f"{W}t":
            pieces.append(child.text or "")
        elif tag == f"{W}tab":
            pieces.append("\t")
        elif tag in (f"{W}br", f"{W}cr"):
            pieces.append("\n")
        elif tag == f"{W}noBreakHyphen":
            pieces.append("-")
        elif tag == f"{W}p":  # a text box's paragraph inside this one
            pieces.append("\n")
            _collect(child, pieces)
        else:
            _collect(child, pieces)


class _Reader:
    def __init__(
        self,
        *,
        styles: dict[str, int],
        notes: dict[tuple[str, str], str],
        comments: dict[tuple[str, str], str],
        authors: dict[str, str],
    ) -> None:
        self.styles = styles
        self.notes = notes
        self.comments = comments
        self.authors = authors
        self.out = DocumentText()

    def blocks(self, container: etree._Element) -> None:
        for child in container:
            if child.tag == f"{W}p":
                self.paragraph(child)
            elif child.tag == f"{W}tbl":
                self.out.table(self.table(child))
            elif child.tag in (f"{W}sdt", f"{W}sdtContent", f"{W}customXml", f"{W}ins"):
                self.blocks(child.find(f"{W}sdtContent") if child.tag == f"{W}sdt" else child)

    def paragraph(self, paragraph: etree._Element) -> None:
        text = _paragraph_text(paragraph)
        level = self._level(paragraph)
        if level is not None and clean(text) and len(clean(text)) <= 200:
            self.out.heading(level, text)
        else:
            self.out.paragraph(text)
        for extra in self._attached(paragraph):
            self.out.paragraph(extra)

    def _level(self, paragraph: etree._Element) -> int | None:
        properties = paragraph.find(f"{W}pPr")
        if properties is None:
            return None
        style = properties.find(f"{W}pStyle")
        if style is not None and style.get(f"{W}val", "") in self.styles:
            return self.styles[style.get(f"{W}val", "")]
        outline = properties.find(f"{W}outlineLvl")
        if outline is not None and outline.get(f"{W}val", "").isdigit():
            level = int(outline.get(f"{W}val", "9"))
            return level + 1 if level < 9 else None
        return None

    def _attached(self, paragraph: etree._Element) -> list[str]:
        """The footnotes, endnotes and comments this paragraph refers to, in its order."""
        extras = []
        for element in paragraph.iter(
            f"{W}footnoteReference", f"{W}endnoteReference", f"{W}commentReference"
        ):
            identifier = element.get(f"{W}id", "")
            if element.tag == f"{W}commentReference":
                text = self.comments.get(("comment", identifier))
                if text:
                    author = self.authors.get(identifier, "")
                    who = f"Comment, {author}" if author else "Comment"
                    extras.append(f"[{who}: {text}]")
                continue
            tag = "footnote" if element.tag == f"{W}footnoteReference" else "endnote"
            text = self.notes.get((tag, identifier))
            if text:
                extras.append(f"[^{identifier}]: {text}")
        return extras

    def table(self, table: etree._Element) -> list[list[str]]:
        """Rows of cell texts, a merged cell's text in every cell it covers."""
        rows: list[list[str]] = []
        for row in table.findall(f"{W}tr"):
            cells: list[str] = []
            for cell in row.findall(f"{W}tc"):
                properties = cell.find(f"{W}tcPr")
                span = 1
                continued = False
                if properties is not None:
                    grid = properties.find(f"{W}gridSpan")
                    if grid is not None and grid.get(f"{W}val", "").isdigit():
                        span = min(int(grid.get(f"{W}val", "1")), 64)
                    merge = properties.find(f"{W}vMerge")
                    continued = merge is not None and merge.get(f"{W}val", "continue") != "restart"
                column = len(cells)
                if continued and rows and column < len(rows[-1]):
                    text = rows[-1][column]
                else:
                    text = " ".join(
                        filter(None, (clean(_paragraph_text(p)) for p in cell.iter(f"{W}p")))
                    )
                cells.extend([text] * span)
            rows.append(cells)
        return rows


def document_title(archive: zipfile.ZipFile, name: str) -> str:
    """The title in the document's properties (docProps/core.xml), "" when none."""
    tree = xml_part(archive, "docProps/core.xml", name=name)
    if tree is None:
        return ""
    title = tree.find("{http://purl.org/dc/elements/1.1/}title")
    return clean(title.text or "") if title is not None else ""
