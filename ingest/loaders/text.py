from __future__ import annotations

import codecs
from pathlib import Path

from ingest.passages import LoaderError, Passage


def decode(data: bytes) -> str:
    """Decode text bytes: a BOM wins, then UTF-8, then Windows-1252, which never fails."""
    for bom, encoding in (
        (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if data.startswith(bom):
            return data.decode(encoding, errors="replace")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        # cp1252 leaves five bytes undefined; `replace` keeps them from ever raising.
        return data.decode("cp1252", errors="replace")


def looks_like_text(head: bytes) -> bool:
    if not head:
        return True
    if b"\x00" in head and not head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return False
    sample = decode(head)
    printable = sum(ch.isprintable() or ch in "\n\r\t" for ch in sample)
    return printable / max(len(sample), 1) > 0.95


def load(path: Path) -> list[Passage]:
    content = decode(path.read_bytes()).replace("\r\n", "\n").replace("\x00", "")
    if not content.strip():
        raise LoaderError("The file is empty: there is no text to read.")
    return [Passage(text=content, page=None)]
