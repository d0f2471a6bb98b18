"""OpenDocument text (.odt), read from its content.xml.

Headings (text:h, with their outline level) give the section path. A footnote or endnote
follows the paragraph that holds it, as "[^n]: text"; a comment (office:annotation) follows
its paragraph as "[Comment, author: text]"; tracked changes read as accepted (the deleted
text, kept apart in text:tracked-changes, is left out). Tables of contents and indexes are
left out: they repeat the headings. Tables become Markdown rows.
"""

from __future__ import annotations

import zipfile

from lxml import etree

from ingest.loaders.blocks import DocumentText, clean
from ingest.loaders.containers import xml_part
from ingest.passages import LoaderError, Passage
from texts import Text

TEXT = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
TABLE = "{urn:oasis:names:tc:opendocument:xmlns:table:1.0}"
OFFICE = "{urn:oasis:names:tc:opendocument:xmlns:office:1.0}"
DRAW = "{urn:oasis:names:tc:opendocument:xmlns:drawing:1.0}"
DC = "{http://purl.org/dc/elements/1.1/}"

_SKIPPED = {
    f"{TEXT}tracked-changes",
    f"{TEXT}table-of-content",
    f"{TEXT}alphabetical-index",
    f"{TEXT}illustration-index",
    f"{TEXT}table-index",
    f"{TEXT}object-index",
    f"{TEXT}user-index",
    f"{TEXT}bibliography",
    f"{TEXT}sequence-decls",
    f"{TEXT}variable-decls",
    f"{OFFICE}forms",
}
_CONTAINERS = {
    f"{TEXT}section",
    f"{TEXT}list",
    f"{TEXT}list-item",
    f"{TEXT}list-header",
    f"{TEXT}soft-page-break",
    f"{TEXT}index-body",
    f"{OFFICE}text",
}


def load(archive: zipfile.ZipFile, name: str) -> list[Passage]:
    content = xml_part(archive, "content.xml", name=name)
    body = None if content is None else content.find(f"{OFFICE}body/{OFFICE}text")
    if body is None:
        raise LoaderError(Text("“%(name)s” has no document text.", name=name))
    out = DocumentText()
    _blocks(body, out)
    return out.finish()


def title(archive: zipfile.ZipFile, name: str) -> str:
    meta = xml_part(archive, "meta.xml", name=name)
    found = None if meta is None else meta.find(f".//{DC}title")
    return clean(found.text or "") if found is not None else ""


def _blocks(container: etree._Element, out: DocumentText) -> None:
    for child in container:
        tag = child.tag
        if not isinstance(tag, str) or tag in _SKIPPED:
            continue
        if tag == f"{TEXT}h":
            level = child.get(f"{TEXT}outline-level", "1")
            text, extras = _inline(child)
            out.heading(int(level) - 1 if level.isdigit() else 0, text)
            for extra in extras:
                out.paragraph(extra)
        elif tag == f"{TEXT}p":
            text, extras = _inline(child)
            out.paragraph(text)
            for extra in extras:
                out.paragraph(extra)
            # A paragraph holding a frame with a text box or a table: its blocks follow.
            for frame in child.iter(f"{DRAW}text-box"):
                _blocks(frame, out)
        elif tag == f"{TABLE}table":
            out.table(_table(child))
        elif tag in _CONTAINERS:
            _blocks(child, out)


def _inline(paragraph: etree._Element) -> tuple[str, list[str]]:
    """A paragraph's text, and its footnotes and comments to follow it."""
    pieces: list[str] = [paragraph.text or ""]
    extras: list[str] = []
    _collect(paragraph, pieces, extras)
    return "".join(pieces), extras


def _collect(element: etree._Element, pieces: list[str], extras: list[str]) -> None:
    for child in element:
        tag = child.tag
        if tag == f"{TEXT}s":
            count = child.get(f"{TEXT}c", "1")
            pieces.append(" " * (int(count) if count.isdigit() else 1))
        elif tag == f"{TEXT}tab":
            pieces.append("\t")
        elif tag == f"{TEXT}line-break":
            pieces.append("\n")
        elif tag == f"{TEXT}note":
            citation = child.find(f"{TEXT}note-citation")
            mark = clean(citation.text or "") if citation is not None else ""
            body = child.find(f"{TEXT}note-body")
            if body is not None:
                text = " ".join(filter(None, (clean(_inline(p)[0]) for p in body.iter(f"{TEXT}p"))))
                if text:
                    extras.append(f"[^{mark or len(extras) + 1}]: {text}")
        elif tag == f"{OFFICE}annotation":
            author = child.find(f"{DC}creator")
            who = clean(author.text or "") if author is not None else ""
            text = " ".join(filter(None, (clean(_inline(p)[0]) for p in child.iter(f"{TEXT}p"))))
            if text:
                extras.append(f"[Comment, {who}: {text}]" if who else f"[Comment: {text}]")
        elif tag == f"{DRAW}frame" or tag == f"{OFFICE}annotation-end":
            pass  # a frame's text boxes are read as blocks of their own
        elif isinstance(tag, str):
            pieces.append(child.text or "")
            _collect(child, pieces, extras)
        pieces.append(child.tail or "")


def _table(table: etree._Element) -> list[list[str]]:
    rows: list[list[str]] = []
    spans: dict[int, str] = {}
    for row in table.iter(f"{TABLE}table-row"):
        if row.getparent() is not table and row.getparent().getparent() is not table:
            continue  # a nested table's rows
        cells: list[str] = []
        for cell in row:
            if cell.tag not in (f"{TABLE}table-cell", f"{TABLE}covered-table-cell"):
                continue
            column = len(cells)
            if cell.tag == f"{TABLE}covered-table-cell":
                cells.append(spans.get(column, ""))
                continue
            paragraphs = cell.iter(f"{TEXT}p", f"{TEXT}h")
            text = " ".join(filter(None, (clean(_inline(p)[0]) for p in paragraphs)))
            across = cell.get(f"{TABLE}number-columns-spanned", "1")
            width = int(across) if across.isdigit() else 1
            for offset in range(min(width, 64)):
                spans[column + offset] = text
            cells.append(text)
        rows.append(cells)
    return rows
