from __future__ import annotations

import codecs
from pathlib import Path
from typing import NamedTuple

from charset_normalizer import from_bytes

from ingest.passages import LoaderError, Passage
from ingest.structure import headings_in_text, starts_from_headings
from texts import Text

# Below this many bytes a detector's guess is noise; Windows-1252 is the likelier answer.
MIN_BYTES_TO_DETECT = 32


class Decoded(NamedTuple):
    text: str
    encoding: str
    guessed: bool  # True when neither a BOM nor valid UTF-8 said what the encoding is


def decode_text(data: bytes) -> Decoded:
    """Decode text bytes, never raising: a BOM wins, then UTF-8, then a detected encoding
    (charset-normalizer), then Windows-1252 with replacement characters."""
    for bom, encoding in (
        (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if data.startswith(bom):
            return Decoded(data.decode(encoding, errors="replace"), encoding, False)
    try:
        return Decoded(data.decode("utf-8"), "utf-8", False)
    except UnicodeDecodeError:
        pass
    if len(data) >= MIN_BYTES_TO_DETECT:
        best = from_bytes(data).best()
        if best is not None and best.encoding:
            text = str(best)
            return Decoded(text, _western_name(data, text) or best.encoding, True)
    # cp1252 leaves five bytes undefined; `replace` keeps them from ever raising.
    return Decoded(data.decode("cp1252", errors="replace"), "cp1252", True)


def _western_name(data: bytes, text: str) -> str:
    """ "latin-1" (or "cp1252", its Windows superset) when the detector's text is exactly
    what that encoding reads. Central European cp1250 agrees with Latin-1 on the letters of
    German and much else, and the detector may name it for a plain Latin-1 file."""
    try:
        western = data.decode("cp1252")
    except UnicodeDecodeError:
        return ""
    if western != text:
        return ""
    # Latin-1 has control characters where cp1252 has its quotes, dashes and the euro.
    return "cp1252" if any(0x80 <= byte <= 0x9F for byte in data) else "latin-1"


def decode(data: bytes) -> str:
    return decode_text(data).text


def looks_like_text(head: bytes) -> bool:
    if not head:
        return True
    if b"\x00" in head and not head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return False
    sample = decode(head)
    printable = sum(ch.isprintable() or ch in "\n\r\t" for ch in sample)
    return printable / max(len(sample), 1) > 0.95


def load(path: Path) -> tuple[list[Passage], Text]:
    """One passage, and the reader line for the source info (which encoding, and whether
    it had to be guessed, so a person can tell why odd characters appear)."""
    decoded = decode_text(path.read_bytes())
    content = decoded.text.replace("\r\n", "\n").replace("\x00", "")
    if not content.strip():
        raise LoaderError(Text("The file is empty: there is no text to read."))
    if decoded.guessed:
        reader = Text(
            "text file (encoding not declared; read as %(encoding)s, a guess)",
            encoding=decoded.encoding,
        )
    else:
        reader = Text("text file (%(encoding)s)", encoding=decoded.encoding)
    # Markdown's `#` headings, else numbered heading lines, give the sections.
    sections, _ = starts_from_headings(headings_in_text(content, markdown=True))
    return [Passage(text=content, page=None, sections=sections)], reader
