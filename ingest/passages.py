from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Passage:
    """A stretch of a source's text that chunks never cross: a PDF page, a whole text file."""

    text: str
    page: int | None = None


class LoaderError(Exception):
    """A source cannot be read; the message is shown to the person who uploaded it."""
