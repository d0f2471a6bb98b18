"""Where a source's sections begin: its section path at every point of its text.

A chunk that knows it sits in "Network setup › 5.5 The network configuration" can say so
with its citation, can be found by the words of its section's title, and lets the studio
build a mind map or a report from the document's own outline.

The path comes from the PDF's outline (its bookmarks) when it has a sane one; otherwise
from the headings in the text: Markdown's `#` lines, a web page's `<h1>`-`<h6>`, or
numbered heading lines ("2.3 Results") in order.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

# Deeper levels are folded into their parent: a path of more is noise to a reader.
MAX_DEPTH = 6
MAX_ENTRIES = 10_000
MAX_LABEL_CHARS = 160
# An outline whose entries go backwards through the pages more often than this is not a
# table of contents of the text in reading order; the document is read without it.
MAX_BACKWARD_SHARE = 0.1


@dataclass(frozen=True)
class SectionStart:
    """From `offset` (in the passage's text) on, the text is in the section `path`."""

    offset: int
    path: tuple[str, ...]


@dataclass(frozen=True)
class OutlineEntry:
    level: int  # 0 for a chapter, 1 for its sections, …
    title: str
    page: int  # from 1


_SPACE = re.compile(r"\s+")
_NOT_WORD = re.compile(r"[\W_]+")
# "1.1.4 ", "A.2 ", "IV. ", "Chapter 5 ", "Kapitel 5 ", "5. " before a heading's title (not
# "A " or "I ": those begin titles).
_NUMBER_PREFIX = re.compile(
    r"^(?:(?:chapter|kapitel|part|teil|appendix|anhang|section|abschnitt)\s+)?"
    r"(?:\d+(?:\.\d+)*\.?|[A-Z](?:\.\d+)+\.?|[IVXLC]+\.)\s+",
    re.IGNORECASE,
)
_NUMBERED_HEADING = re.compile(r"^(\d{1,2}(?:\.\d{1,3}){0,5})\.?[ \t]+(\S[^\n]{0,118})$", re.M)
_MARKDOWN_HEADING = re.compile(r"^(#{1,6})[ \t]+(\S[^\n]*?)[ \t#]*$", re.M)
_FENCE = re.compile(r"^(```|~~~)", re.M)


def label(text: str) -> str:
    """A heading as a short, clean label."""
    cleaned = _SPACE.sub(" ", text).strip()
    if len(cleaned) > MAX_LABEL_CHARS:
        cleaned = cleaned[: MAX_LABEL_CHARS - 1].rstrip() + "…"
    return cleaned


def strip_number(heading: str) -> str:
    """A heading without its section number: "1.1.4 The root shell prompt" → "The root
    shell prompt"."""
    return _NUMBER_PREFIX.sub("", heading.strip()) or heading.strip()


def _key(text: str) -> str:
    return _NOT_WORD.sub("", text.casefold())


def sane_outline(entries: Sequence[OutlineEntry], *, page_count: int) -> list[OutlineEntry]:
    """The entries worth using, or none when the outline is not the text's own order."""
    kept = [
        OutlineEntry(
            level=min(entry.level, MAX_DEPTH - 1), title=label(entry.title), page=entry.page
        )
        for entry in entries[:MAX_ENTRIES]
        if 1 <= entry.page <= page_count and entry.title.strip()
    ]
    pairs = zip(kept, kept[1:], strict=False)
    backward = sum(1 for before, after in pairs if after.page < before.page)
    if not kept or backward > MAX_BACKWARD_SHARE * len(kept):
        return []
    return kept


def _line_starts(text: str) -> Iterable[tuple[int, str]]:
    offset = 0
    for line in text.split("\n"):
        yield offset, line
        offset += len(line) + 1


def _find_heading(text: str, title: str, *, after: int) -> tuple[int, str] | None:
    """Where on the page a heading with this title begins, and the line as printed (with
    its number, "1.1.4 The root shell prompt"); None if the page does not print it."""
    wanted = _key(title)
    if not wanted:
        return None
    for offset, line in _line_starts(text):
        if offset < after or not line.strip():
            continue
        printed = _key(_NUMBER_PREFIX.sub("", line.strip()))
        if printed == wanted or (len(wanted) >= 12 and printed.startswith(wanted[:40])):
            return offset, line
        if _key(line) == wanted:
            return offset, line
    return None


def sections_from_outline(
    entries: Sequence[OutlineEntry], pages: dict[int, str]
) -> dict[int, tuple[SectionStart, ...]]:
    """The section starts of each page's text (pages numbered from 1, as `pages` has them).

    An entry is placed where its page prints its title; a page that does not print it
    starts the section at its top. A page without an entry continues the section of the
    page before it.
    """
    by_page: dict[int, list[OutlineEntry]] = {}
    for entry in entries:
        by_page.setdefault(entry.page, []).append(entry)
    result: dict[int, tuple[SectionStart, ...]] = {}
    path: tuple[str, ...] = ()
    for number in sorted(set(pages) | set(by_page)):
        text = pages.get(number, "")
        starts = [SectionStart(0, path)] if path else []
        after = 0
        for entry in by_page.get(number, []):
            found = _find_heading(text, entry.title, after=after)
            offset, shown = (found[0], label(found[1])) if found else (after, entry.title)
            path = (*path[: entry.level], shown)
            if starts and starts[-1].offset == offset:
                starts[-1] = SectionStart(offset, path)
            else:
                starts.append(SectionStart(offset, path))
            after = offset
        if number in pages:
            result[number] = tuple(starts)
    return result


def _numbered_headings(text: str) -> list[tuple[int, int, str]]:
    """(offset, level, label) of the numbered heading lines, kept only while their numbers
    increase: a list "1. … 2. …" inside section 4 goes back, so it is not taken."""
    found: list[tuple[int, int, str]] = []
    last: tuple[int, ...] = ()
    for match in _NUMBERED_HEADING.finditer(text):
        number, title = match.group(1), match.group(2).strip()
        words = title.split()
        if (
            not title[0].isupper()
            or len(words) > 12
            or title[-1] in ".,;:"
            or re.search(r"(?:\.\s?){4,}|\s\d{1,4}$", title)
        ):
            continue
        parts = tuple(int(part) for part in number.split("."))
        if parts <= last:
            continue
        last = parts
        found.append((match.start(), len(parts) - 1, label(f"{number} {title}")))
    return found


def _markdown_headings(text: str) -> list[tuple[int, int, str]]:
    fenced = _fenced_ranges(text)
    return [
        (match.start(), len(match.group(1)) - 1, label(match.group(2)))
        for match in _MARKDOWN_HEADING.finditer(text)
        if not any(start <= match.start() < end for start, end in fenced)
    ]


def _fenced_ranges(text: str) -> list[tuple[int, int]]:
    marks = [match.start() for match in _FENCE.finditer(text)]
    return [(marks[index], marks[index + 1]) for index in range(0, len(marks) - 1, 2)]


def headings_in_text(text: str, *, markdown: bool = False) -> list[tuple[int, int, str]]:
    """(offset, level, label) of the headings a text shows by itself."""
    if markdown:
        headings = _markdown_headings(text)
        if headings:
            return headings
    return _numbered_headings(text)


def named_headings(text: str, headings: Sequence[tuple[int, str]]) -> list[tuple[int, int, str]]:
    """(offset, level, label) of the lines of `text` that are the given (level, title)
    headings, found in order (a web page's `<h1>`-`<h6>` in its extracted text)."""
    found: list[tuple[int, int, str]] = []
    lines = list(_line_starts(text))
    position = 0
    for level, title in headings:
        wanted = _key(title)
        if not wanted:
            continue
        for index in range(position, len(lines)):
            offset, line = lines[index]
            if _key(line) == wanted:
                found.append((offset, level, label(line)))
                position = index + 1
                break
    return found


def starts_from_headings(
    headings: Sequence[tuple[int, int, str]], *, carried: tuple[str, ...] = ()
) -> tuple[tuple[SectionStart, ...], tuple[str, ...]]:
    """Section starts of one passage from its headings, and the path in effect at its end
    (for the next passage). Levels are made relative: the shallowest heading is level 0."""
    starts = [SectionStart(0, carried)] if carried else []
    path = carried
    for offset, level, title in headings:
        path = (*path[: min(level, len(path))], title)[-MAX_DEPTH:]
        if starts and starts[-1].offset == offset:
            starts[-1] = SectionStart(offset, path)
        else:
            starts.append(SectionStart(offset, path))
    return tuple(starts), path


def section_at(starts: Sequence[SectionStart], offset: int) -> tuple[str, ...]:
    """The section path in effect at `offset`."""
    path: tuple[str, ...] = ()
    for start in starts:
        if start.offset > offset:
            break
        path = start.path
    return path
