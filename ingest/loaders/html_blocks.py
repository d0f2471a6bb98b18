"""An HTML or XHTML document's blocks, in reading order, handed to a `DocumentText`.

Used for an e-book's chapters, whose every word is the author's (unlike a web page, whose
menus trafilatura removes). Every run of text between block elements is a paragraph, so a
poem whose lines are <div>s, or text straight inside a <section>, is kept; <h1>-<h6> are
headings; tables become Markdown rows; scripts, styles and forms are never read, and nothing
the document links to (images, style sheets) is fetched.
"""

from __future__ import annotations

import re

import lxml.html
from lxml import etree

from ingest.loaders.blocks import DocumentText, clean

_HEADINGS = {"h1": 0, "h2": 1, "h3": 2, "h4": 3, "h5": 4, "h6": 5}
_BLOCKS = {
    "address", "article", "aside", "blockquote", "body", "center", "dd", "details", "dialog",
    "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "header", "hgroup", "hr",
    "li", "main", "ol", "p", "section", "summary", "ul", "caption", "tr", "td", "th", "tbody",
    "thead", "tfoot", "html",
}  # fmt: skip
_SKIPPED = {
    "script",
    "style",
    "noscript",
    "template",
    "head",
    "button",
    "select",
    "iframe",
    "object",
}
_XML_DECLARATION = re.compile(r"^\s*<\?xml[^>]*\?>", re.I)
_ENCODING = re.compile(rb"""^\s*<\?xml[^>]*encoding=["']([\w.-]+)["']""", re.I)

_PARSER = lxml.html.HTMLParser(no_network=True, remove_comments=True, remove_pis=True)


def parse(data: bytes) -> etree._Element | None:
    """An XHTML file's tree, its encoding taken from its XML declaration (UTF-8 without
    one, as XML says); None when it holds no document."""
    match = _ENCODING.match(data[:200])
    encoding = match.group(1).decode("ascii") if match else "utf-8"
    try:
        text = data.decode(encoding, errors="replace")
    except LookupError:
        text = data.decode("utf-8", errors="replace")
    text = _XML_DECLARATION.sub("", text, count=1).replace("\x00", "")
    if not text.strip():
        return None
    try:
        return lxml.html.document_fromstring(text, parser=_PARSER)
    except (etree.ParserError, ValueError):
        return None


def _name(element: etree._Element) -> str:
    tag = element.tag
    return tag.rsplit("}", 1)[-1].lower() if isinstance(tag, str) else ""


def is_contents_page(tree: etree._Element) -> bool:
    """A page that is mostly links (an e-book's own table of contents), which repeats the
    headings the chapters hold."""
    body = tree.find("body")
    if body is None:
        return False
    words = len(body.text_content().split())
    links = body.findall(".//a")
    linked = sum(len(a.text_content().split()) for a in links)
    return len(links) >= 5 and words > 0 and linked >= 0.8 * words


def add_blocks(element: etree._Element, out: DocumentText) -> None:
    buffer: list[str] = []
    _walk(element, out, buffer)
    _flush(out, buffer)


def _flush(out: DocumentText, buffer: list[str]) -> None:
    text = "".join(buffer)
    buffer.clear()
    if text.strip():
        out.paragraph(text)


def _walk(element: etree._Element, out: DocumentText, buffer: list[str]) -> None:
    if element.text:
        buffer.append(element.text)
    for child in element:
        name = _name(child)
        if not name or name in _SKIPPED:
            pass
        elif name in _HEADINGS:
            _flush(out, buffer)
            out.heading(_HEADINGS[name], child.text_content())
        elif name == "table":
            _flush(out, buffer)
            out.table(_table(child))
        elif name == "br":
            buffer.append("\n")
        elif name == "pre":
            _flush(out, buffer)
            out.paragraph(child.text_content())
        elif name in _BLOCKS:
            _flush(out, buffer)
            _walk(child, out, buffer)
            _flush(out, buffer)
        else:
            _walk(child, out, buffer)
        if child.tail:
            buffer.append(child.tail)


def _table(table: etree._Element) -> list[list[str]]:
    """Rows of cell texts, a cell spanning columns or rows spelled out in each."""
    rows: list[list[str]] = []
    below: dict[int, tuple[int, str]] = {}  # column → (rows left, text) of a rowspan
    for row in table.iter("tr"):
        if row.xpath("ancestor::table[1]")[0] is not table:
            continue  # a nested table's row
        cells: list[str] = []
        for cell in row:
            if _name(cell) not in ("td", "th"):
                continue
            _fill_from_above(cells, below)
            text = clean(cell.text_content())
            across = _number(cell.get("colspan"))
            down = _number(cell.get("rowspan"))
            for _ in range(across):
                if down > 1:
                    below[len(cells)] = (down - 1, text)
                cells.append(text)
        _fill_from_above(cells, below)
        rows.append(cells)
    return rows


def _fill_from_above(cells: list[str], below: dict[int, tuple[int, str]]) -> None:
    """The cells a row-spanning cell above covers in this row, from the next column on."""
    while len(cells) in below:
        left, text = below[len(cells)]
        cells.append(text)
        if left <= 1:
            del below[len(cells) - 1]
        else:
            below[len(cells) - 1] = (left - 1, text)


def _number(value: str | None) -> int:
    return min(int(value), 64) if value and value.strip().isdigit() and int(value) > 0 else 1
