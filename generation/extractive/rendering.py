"""The chosen units as the answer reads: by stretch of text, the best first, each in reading
order; prose joined with a marker after each sentence, commands on lines of their own, a long
run of table rows cut to the stretch around the question's words."""

from __future__ import annotations

import re

from generation.extractive.candidates import Candidate, Passage, key_of, singular_terms
from generation.extractive.weights import MAX_CODE_LINES, MAX_ITEM_CHARS, MAX_SENTENCE_CHARS
from generation.passage_units import CLOSING_RE, Unit


def shown_length(unit: Unit) -> int:
    """The characters the answer shows of the unit (a command's first lines only)."""
    if unit.code:
        return len("\n".join(unit.text.split("\n")[:MAX_CODE_LINES]))
    return min(len(unit.text), MAX_SENTENCE_CHARS)


def in_reading_order(
    candidates: list[Candidate], passages: list[Passage], chosen: set[int], picks: list[int]
) -> list[int]:
    """The chosen units by stretch of text (one document's passages on the same page, or on
    the next page in the same section), the stretch of the best pick first; within a stretch
    in reading order. A sentence of the page before, from another section, does not come
    before the best one."""

    def place_of(index: int) -> tuple[int, int, tuple[str, ...]]:
        passage = passages[candidates[index].passage]
        return (passage.document, passage.page, passage.section)

    places = sorted({place_of(i) for i in chosen})
    stretch: dict[tuple[int, int, tuple[str, ...]], int] = {}
    for number, (document, page, section) in enumerate(places):
        previous = places[number - 1] if number else None
        joined = (
            previous is not None
            and previous[0] == document
            and (page == previous[1] or (page - previous[1] == 1 and section == previous[2]))
        )
        stretch[(document, page, section)] = stretch[previous] if joined and previous else number

    def stretch_of(index: int) -> int:
        return stretch[place_of(index)]

    first_pick: dict[int, int] = {}
    for rank, index in enumerate(picks):
        first_pick.setdefault(stretch_of(index), rank)

    def place(index: int) -> tuple[int, ...]:
        candidate = candidates[index]
        passage = passages[candidate.passage]
        return (
            first_pick[stretch_of(index)],
            passage.page,
            passage.start,
            candidate.passage,
            candidate.unit.position,
        )

    return sorted(chosen, key=place)


def render(candidates: list[Candidate], chosen: list[int], question_terms: set[str]) -> str:
    """Prose joined by spaces, each command block on lines of its own; a marker after each
    sentence, and after a block no sentence of its passage introduces. Of a long run of
    table rows (no closing stop, and not a sentence the passage cuts off) only the stretch
    around the question's words is shown."""
    parts: list[str] = []
    previous: Candidate | None = None
    listing = False  # the previous unit is a lead-in or an item of its list
    quoted: set[str] = set()
    for index in chosen:
        candidate = candidates[index]
        unit, marker = candidate.unit, f"[{candidate.passage + 1}]"
        if key_of(unit.text) in quoted:
            continue  # the same line twice on a page ("APT::Periodic::… ”1”;")
        quoted.add(key_of(unit.text))
        follows = (
            previous is not None
            and previous.passage == candidate.passage
            and previous.unit.position == unit.position - 1
        )
        if not unit.code and follows and listing and len(unit.text) <= MAX_ITEM_CHARS:
            # An item of the list the sentence before introduced: a line of its own, cited
            # by that sentence's marker.
            parts.append(f"\n{_balanced(unit.text)}\n")
            previous = candidate
            continue
        listing = unit.introduces_next
        if unit.code:
            lines = unit.text.split("\n")
            text = "\n".join(lines[:MAX_CODE_LINES] + ["…"] * (len(lines) > MAX_CODE_LINES))
            introduced = (
                previous is not None
                and previous.passage == candidate.passage
                and previous.unit.position in (unit.position - 1, unit.position - 2)
            )
            parts.append("\n" + (text if introduced else f"{text} {marker}") + "\n")
        else:
            rows = not unit.cut_off and not CLOSING_RE.search(unit.text)
            if rows and len(unit.text) > MAX_ITEM_CHARS:
                text = _excerpt(unit.text, question_terms)
            else:
                text = _balanced(unit.text)[:MAX_SENTENCE_CHARS]
                if unit.cut_off or len(unit.text) > MAX_SENTENCE_CHARS:
                    text += " …"
            parts.append(f"{text} {marker} ")
        previous = candidate
    return re.sub(r" *\n+ *", "\n", "".join(parts)).strip()


def _excerpt(text: str, question_terms: set[str], width: int = MAX_ITEM_CHARS) -> str:
    """The stretch of at most `width` characters (whole words) holding most of the question's
    words, "…" where it cuts: table rows a page ran together have no sentence to end at."""
    words = list(re.finditer(r"\S+", text))
    matched = [bool(question_terms & set(singular_terms(word.group()))) for word in words]
    best = (0, 0, 0)  # matches, first word, last word
    last = 0
    for first in range(len(words)):
        last = max(last, first)
        while last + 1 < len(words) and words[last + 1].end() - words[first].start() <= width:
            last += 1
        found = sum(matched[first : last + 1])
        if found > best[0]:
            best = (found, first, last)
    _, first, last = best
    # Around the matched words, the rest of the width shared between both sides.
    hits = [at for at in range(first, last + 1) if matched[at]] or [first]
    first, last = hits[0], hits[-1]
    grown = True
    while grown:
        grown = False
        for left, right in ((first - 1, last), (first, last + 1)):
            inside = left >= 0 and right < len(words)
            if inside and words[right].end() - words[left].start() <= width:
                first, last, grown = left, right, True
    shown = text[words[first].start() : words[last].end()]
    opening = "… " if first > 0 else ""
    ending = " …" if last < len(words) - 1 else ""
    return f"{opening}{shown}{ending}"


def _balanced(text: str) -> str:
    """Without the bracket a sentence split from the rest of its parenthesis kept:
    "(However, … filesystem." and "See Section 1.2.2.)"."""
    if text.startswith("(") and ")" not in text:
        text = text[1:]
    if text.endswith(")") and "(" not in text:
        text = text[:-1]
    elif text.endswith(".)") and "(" not in text:
        text = text[:-2] + "."
    return text
