"""RTF documents: their text, by striprtf, in the code page their text is written in.

RTF escapes non-ASCII bytes (\\'e8) in the code page of the font in use, which may differ
from the document's (\\ansicpg1252 with Czech text set in a Central European font). striprtf
decodes the whole document with one code page, so the code page is taken from the fonts
the text actually uses: the most used font's character set, else the document's own.
A table's rows become Markdown rows. RTF has no heading styles Loupe can rely on; numbered
heading lines give the sections.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from striprtf.striprtf import rtf_to_text

from ingest.loaders.blocks import DocumentText
from ingest.passages import LoaderError, Passage
from ingest.structure import headings_in_text, starts_from_headings
from texts import Text

# \fcharsetN → Python codec (the Windows code pages RTF writers use).
_CHARSETS = {
    0: "cp1252", 161: "cp1253", 162: "cp1254", 163: "cp1258", 177: "cp1255", 178: "cp1256",
    186: "cp1257", 204: "cp1251", 222: "cp874", 238: "cp1250", 128: "cp932", 129: "cp949",
    134: "gbk", 136: "big5",
}  # fmt: skip
_FONT = re.compile(rb"\\f(\d+)[^;{}]*?\\fcharset(\d+)")
_FONT_USE = re.compile(rb"\\(?:a|loch\\af|hich\\af|dbch\\af)?f(\d+)(?![\d])")
_CODE_PAGE = re.compile(rb"\\ansicpg(\d+)")
MAX_RTF_BYTES = 64 * 1024 * 1024
# Paragraph ends and the table marks that decide whether a paragraph is in a table cell
# (\intbl holds until the next \pard, as every paragraph property does).
_MARKS = re.compile(r"\\(pard|par|intbl|cell|row)(?![a-z])")


def _cells_on_one_line(source: str) -> str:
    """The source with the paragraph breaks inside table cells made spaces, so that
    striprtf's "cell|cell|" of a row lands on one line."""
    pieces = []
    in_table = False
    last = 0
    for mark in _MARKS.finditer(source):
        word = mark.group(1)
        if word == "pard":
            in_table = False
        elif word == "intbl":
            in_table = True
        elif word == "par" and in_table:
            pieces.append(source[last : mark.start()] + " ")
            last = mark.end()
    pieces.append(source[last:])
    return "".join(pieces)


def _table_row(line: str) -> str:
    if line.count("|") < 2 or not line.endswith("|"):
        return line
    cells = [cell.strip() for cell in line.rstrip("|").split("|")]
    return "| " + " | ".join(cells) + " |"


def is_rtf(head: bytes) -> bool:
    return head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{\\rtf")


def code_page(data: bytes) -> str:
    fonts = {int(n): int(charset) for n, charset in _FONT.findall(data)}
    body_start = data.find(b"}}", data.find(b"\\fonttbl"))
    used = Counter(int(n) for n in _FONT_USE.findall(data[max(body_start, 0) :]) if int(n) in fonts)
    for font, _count in used.most_common():
        charset = fonts.get(font)
        if charset in _CHARSETS and charset not in (0, 1, 2):
            return _CHARSETS[charset]
        if charset in (0, 1):
            break
    declared = _CODE_PAGE.search(data[:4096])
    if declared:
        name = f"cp{int(declared.group(1))}"
        try:
            "".encode(name)
            return name
        except LookupError:
            pass
    return "cp1252"


def load(path: Path) -> list[Passage]:
    data = path.read_bytes()
    if len(data) > MAX_RTF_BYTES:
        raise LoaderError(
            Text("“%(name)s” is larger than Loupe reads for an RTF file (64 MiB).", name=path.name)
        )
    encoding = code_page(data)
    source = _cells_on_one_line(data.decode("latin-1"))
    try:
        text = rtf_to_text(source, encoding=encoding, errors="replace")
    except (IndexError, ValueError, RecursionError) as exc:
        raise LoaderError(
            Text("“%(name)s” could not be read as RTF (%(error)s).", name=path.name, error=str(exc))
        ) from exc
    text = text.replace("\r\n", "\n").replace("\x00", "")
    lines = [_table_row(" ".join(line.split())) for line in text.split("\n")]
    out = DocumentText()
    content = "\n".join(lines).strip()
    if not content:
        return []
    sections, _ = starts_from_headings(headings_in_text(content))
    out.passages.append(Passage(text=content, sections=sections))
    return out.finish()
