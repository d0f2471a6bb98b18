from __future__ import annotations

from dataclasses import dataclass

from ingest.structure import SectionStart


@dataclass(frozen=True)
class Passage:
    """A stretch of a source's text that chunks never cross: a PDF page, a whole text file.

    `sections` says where in `text` each section begins (the first one at 0 when the
    passage continues a section of the one before); chunks do not cross them either.
    """

    text: str
    page: int | None = None
    # The number the page prints ("5", "xii") where it differs from its place in the file.
    page_label: str = ""
    sections: tuple[SectionStart, ...] = ()


class LoaderError(Exception):
    """A source cannot be read; the message is shown to the person who uploaded it."""
