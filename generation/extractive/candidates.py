"""The units an answer may quote: every retrieved passage's sentences, rows and commands
(generation/passage_units.py), each with its words and the closeness of its part of the passage
to the question, without the copies that consecutive chunks or restating sources hold."""

from __future__ import annotations

from dataclasses import dataclass

from generation.passage_units import Unit, units
from language.words import STOPWORDS, WORD_RE, terms


@dataclass(frozen=True)
class Passage:
    """A retrieved passage as the answerer reads it; passages come best-ranked first."""

    text: str
    section: tuple[str, ...] = ()  # its section path, outermost first
    # Where it sits, so that one document's sentences come in reading order: the
    # document's id, the page and the passage's first character on it.
    document: int = 0
    page: int = 0
    start: int = 0
    # A note or generated document made a source: it restates other sources, so where it
    # copies one of their sentences the original is quoted (and cited) instead.
    restates: bool = False
    # The question's similarity to each consecutive part of `part_words` words of the
    # text (the search's windows, retrieval/windows.py), or to the whole text when there is
    # one value; empty: not known (the units are scored by their words alone).
    closeness: tuple[float, ...] = ()
    part_words: int = 80


@dataclass(frozen=True)
class Candidate:
    unit: Unit
    passage: int  # 0-based index into the passages
    terms: frozenset[str]
    closeness: float | None = None


def singular_terms(text: str) -> list[str]:
    """The text's terms (language.words), a plural's "s" dropped first: a stem is a word's
    first five letters, so "file" and "files", "key" and "keys" would not meet."""
    return terms(" ".join(_singular(word) for word in WORD_RE.findall(text)))


def _singular(word: str) -> str:
    lowered = word.casefold()
    plural = len(lowered) > 3 and lowered.endswith("s") and lowered[-2] not in "su'’"
    return word[:-1] if plural and lowered not in STOPWORDS else word


def key_of(text: str) -> str:
    return " ".join(WORD_RE.findall(text.casefold()))


def candidates_of(passages: list[Passage]) -> list[Candidate]:
    """Every passage's units, without those another passage holds whole (the overlap of
    consecutive chunks, or a cut-off copy of a sentence another chunk holds complete): the
    copy a better-ranked passage holds as a unit of its own is kept, else the longer one;
    an upload's copy goes before a restating passage's, whatever their ranks. Only a copy
    on the same page (where consecutive chunks overlap) or in a restating passage counts: a
    short command ("$ debuild") another page happens to hold is no copy, and dropping it
    would break its list."""
    found = [
        (number, unit, key_of(unit.text), closeness)
        for number, passage in enumerate(passages)
        for unit, closeness in _with_closeness(
            passage,
            units(passage.text, section=passage.section, starts_mid_text=passage.start > 0),
        )
    ]
    keys: list[set[str]] = [set() for _ in passages]
    for number, _, key, _closeness in found:
        keys[number].add(key)
    order = [(passage.restates, number) for number, passage in enumerate(passages)]

    def copied(number: int, key: str, other: int) -> bool:
        if other == number or not _may_copy(passages[number], passages[other]):
            return False
        if key in keys[other]:
            return order[other] < order[number]
        return any(len(held) > len(key) and _cut_from(key, held) for held in keys[other])

    return [
        Candidate(unit, number, frozenset(singular_terms(unit.text)), closeness)
        for number, unit, key, closeness in found
        if key and not any(copied(number, key, other) for other in range(len(passages)))
    ]


def _cut_from(key: str, held: str) -> bool:
    """`key` is the start or the end of the sentence `held`, cut by a chunk's edge."""
    return held.startswith(f"{key} ") or held.endswith(f" {key}")


def _may_copy(one: Passage, other: Passage) -> bool:
    same_page = one.document == other.document and one.page == other.page
    return same_page or one.restates or other.restates


def _with_closeness(passage: Passage, found: list[Unit]) -> list[tuple[Unit, float | None]]:
    """Each unit with the closeness of the part of the passage it begins in."""
    if not passage.closeness:
        return [(unit, None) for unit in found]
    if len(passage.closeness) == 1:
        return [(unit, passage.closeness[0]) for unit in found]
    words = passage.text.split()
    result: list[tuple[Unit, float | None]] = []
    cursor = 0
    for unit in found:
        opening = unit.text.split()[:3]
        for at in range(cursor, len(words)):
            if words[at : at + len(opening)] == opening:
                cursor = at
                break
        part = min(cursor // passage.part_words, len(passage.closeness) - 1)
        result.append((unit, passage.closeness[part]))
    return result


def quotable(candidate: Candidate, *, about_document: bool = False) -> bool:
    unit = candidate.unit
    return not (
        unit.question or unit.fragment or unit.label or (unit.about_document and not about_document)
    )
