"""Running headers and footers: the lines a document prints on many pages around its text.

A manual's title with its release, "3 / 233", a chapter's title on every page of the
chapter: none of it is part of the page's text, yet left in it they sit in half of all
chunks, glued into sentences, quoted as answers and counted as figures.

A line is page furniture when it stands among the first or last lines of a page and its
shape (case folded, every number and roman numeral as `#`) stands there on many pages; or
when it is a bare page number; or when it is the title of an outline entry repeated at the
top or bottom of pages (a chapter's running header).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable

# How many lines at each end of a page can be furniture.
EDGE_LINES = 2
# A shape is a running header when it is at a page's edge on this share of the pages...
MIN_SHARE = 0.2
# ...and on at least this many of them.
MIN_PAGES = 3

_NUMBER = re.compile(r"\d+")
_ROMAN = re.compile(r"\b[ivxlcdm]{1,7}\b")
_SPACE = re.compile(r"\s+")
_OF_TOTAL = re.compile(r"#\s*(?:/|of|von|de|sur)\s*#")
# "12", "- 12 -", "Page 12", "12 / 233", "Seite 3 von 40", "xii"
_PAGE_NUMBER = re.compile(
    r"(?:(?:page|seite|p\.|s\.)\s*)?[-–—]?\s*#\s*[-–—]?",
    re.IGNORECASE,
)


def shape(line: str) -> str:
    """The line with its numbers as `#`; "3 / 233" as one number, so that a front matter's
    "Title xii" and the body's "Title 3 / 233" are the same running header."""
    folded = _SPACE.sub(" ", line.casefold()).strip()
    numbered = _ROMAN.sub("#", _NUMBER.sub("#", folded))
    return _OF_TOTAL.sub("#", numbered)


def _edges(lines: list[str]) -> set[int]:
    """Indexes of the first and last EDGE_LINES non-empty lines."""
    filled = [index for index, line in enumerate(lines) if line.strip()]
    return set(filled[:EDGE_LINES]) | set(filled[-EDGE_LINES:])


def strip_running_lines(
    pages: dict[int, str], *, outline_titles: Iterable[str] = ()
) -> dict[int, str]:
    """The pages' texts without their running headers and footers (pages numbered as given).

    A page whose every line is furniture keeps its text: a page of nothing but a title that
    other pages repeat (a cover, a part title) is better kept than lost.
    """
    split = {number: text.split("\n") for number, text in pages.items()}
    counts: Counter[str] = Counter()
    for lines in split.values():
        counts.update({shape(lines[index]) for index in _edges(lines)})
    threshold = max(MIN_PAGES, math.ceil(MIN_SHARE * len(pages)))
    titles = {shape(title) for title in outline_titles if title.strip()}
    running = {
        line_shape
        for line_shape, count in counts.items()
        if line_shape
        and (
            count >= threshold
            or (count >= 2 and line_shape in titles)
            or (count >= 2 and _PAGE_NUMBER.fullmatch(line_shape) is not None)
        )
    }
    cleaned: dict[int, str] = {}
    for number, lines in split.items():
        drop = {index for index in _edges(lines) if shape(lines[index]) in running}
        kept = [line for index, line in enumerate(lines) if index not in drop]
        text = "\n".join(kept).strip()
        cleaned[number] = text if text else pages[number]
    return cleaned
