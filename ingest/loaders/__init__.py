"""Loaders turn a stored file into passages; one module per kind of source."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from django.contrib.auth.models import User

from ingest.loaders import audio, image, pdf, text
from ingest.passages import LoaderError, Passage

TEXT_SUFFIXES = {".txt", ".md", ".markdown", ".text", ".rst", ".csv"}


def detect_kind(filename: str, head: bytes) -> str:
    """Name the kind of an upload from its first bytes, falling back to its name."""
    if head.lstrip(b"\x00\t\n\r ").startswith(b"%PDF-") or b"%PDF-" in head[:1024]:
        return "pdf"
    if image.is_image(head):
        return "image"
    if audio.is_audio(head):
        return "audio"
    if Path(filename).suffix.lower() in TEXT_SUFFIXES:
        return "text"
    if text.looks_like_text(head):
        return "text"
    raise LoaderError(
        f"{filename!r} is not a file Loupe can read yet: upload a PDF, an image (PNG, JPEG, "
        "WebP, GIF, TIFF), a recording (MP3, WAV, M4A, AAC, Ogg, FLAC, WebM), a text or a "
        "Markdown file."
    )


class Loaded(NamedTuple):
    passages: list[Passage]
    page_count: int | None  # None for kinds without pages
    reader: str  # what produced the text, for the source info: "pypdf text layer", "rapidocr"


def load_passages(
    kind: str,
    path: Path,
    *,
    pdf_capture: str = "text",
    user: User | None = None,
    on_progress: pdf.PageProgress | None = None,
) -> Loaded:
    """Read a stored file; `user` is billed for the model calls that reading makes.

    `on_progress` hears of each page of a PDF read (see `pdf.load`); other kinds have no
    pages to count.
    """
    if kind == "pdf":
        return Loaded(*pdf.load(path, capture=pdf_capture, user=user, on_progress=on_progress))
    if kind == "image":
        passages, reader = image.load(path, user=user)
        return Loaded(passages, None, reader)
    if kind == "audio":
        passages, reader = audio.load(path, user=user)
        return Loaded(passages, None, reader)
    if kind == "text":
        passages, reader = text.load(path)
        return Loaded(passages, None, reader)
    raise LoaderError(f"There is no loader for sources of kind {kind!r}.")
