"""Loaders turn a stored file into passages; one module per kind of source."""

from __future__ import annotations

from pathlib import Path

from ingest.loaders import pdf, text
from ingest.passages import LoaderError, Passage

TEXT_SUFFIXES = {".txt", ".md", ".markdown", ".text", ".rst", ".csv"}


def detect_kind(filename: str, head: bytes) -> str:
    """Name the kind of an upload from its first bytes, falling back to its name."""
    if head.lstrip(b"\x00\t\n\r ").startswith(b"%PDF-") or b"%PDF-" in head[:1024]:
        return "pdf"
    if Path(filename).suffix.lower() in TEXT_SUFFIXES:
        return "text"
    if text.looks_like_text(head):
        return "text"
    raise LoaderError(
        f"{filename!r} is not a file Loupe can read yet: upload a PDF, a text or a Markdown file."
    )


def load_passages(kind: str, path: Path) -> tuple[list[Passage], int | None]:
    """Return the source's passages and its page count (None for kinds without pages)."""
    if kind == "pdf":
        return pdf.load(path)
    if kind == "text":
        return text.load(path), None
    raise LoaderError(f"There is no loader for sources of kind {kind!r}.")
