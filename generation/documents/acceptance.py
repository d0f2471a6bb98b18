"""What Loupe keeps of a chat model's document: its [n] markers that name a passage, a marker
placed by the support check on each claim the model left without one (as an answer's
sentences get, generation/citations.py), and only the claims some passage supports.

A small model skips markers, cites passages that do not exist, or writes a line no passage
holds. None of that fails the document: the claim is attributed, the marker dropped, the
line left out and counted. Only a reply that is mostly unsupported is rejected, with the
share and, for the model's second try, what was wrong item by item."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from citations.verification import best_support
from generation.citations import (
    MARKER_RE,
    OPENING_MARKERS_RE,
    _numbers,
    attribute_sentences,
    claim_spans,
)
from generation.documents.kinds import report
from generation.documents.markers import with_marker
from generation.documents.structured import InvalidOutput
from language.words import terms

# A document is rejected when more than this share of its claims has no supporting passage.
MOST_UNSUPPORTED = 0.5
QUOTED_CHARS = 70  # of an item, in the repair message: enough to find it again


@dataclass(frozen=True)
class Items:
    """A kind whose claims are items of lists: the `lists` of the data holding them, the
    field their markers go in, what one is called, and what it claims (alternatives: it is
    supported when one of them is)."""

    lists: tuple[str, ...]
    cite_in: str
    name: str
    says: Callable[[dict[str, Any]], list[str]]
    # The figures an item shows (a value, a date): each must stand in its passage as
    # written; a label the passage supports does not make an invented date true.
    shows: Callable[[dict[str, Any]], list[str]] = lambda item: []


@dataclass(frozen=True)
class Prose:
    """A kind whose claims are the sentences of one Markdown field; `limit`, its schema's
    maxLength: a text that reached it was stopped there (a grammar stops a local model
    mid-word), and its unfinished last sentence is left out."""

    field: str
    limit: int = 0


@dataclass(frozen=True)
class Bullets:
    """A kind whose claims are the strings of a list in each item of a list (a slide's
    bullets), each carrying its own markers; an item left with none is left out."""

    lists: str
    field: str
    name: str


def _said(item: dict[str, Any], skip: str) -> str:
    """An item's texts and numbers but `skip`, as one sentence (a table row's cells, a
    figure's value and label, a comparison's title and bars)."""
    parts: list[str] = []

    def gather(value: Any) -> None:
        if isinstance(value, str):
            parts.append(value.strip().rstrip(".!?…"))
        elif isinstance(value, int | float) and not isinstance(value, bool):
            parts.append(f"{value:g}")
        elif isinstance(value, list):
            for each in value:
                gather(each)
        elif isinstance(value, dict):
            for name, each in value.items():
                if name != skip:
                    gather(each)

    gather(item)
    return "; ".join(part for part in parts if part) + "."


def _quiz_says(question: dict[str, Any]) -> list[str]:
    """The question with its answer states the fact; the explanation may state it too."""
    if question.get("type") == "multiple_choice":
        options = question.get("options") or []
        index = question.get("answer_index", -1)
        answer = options[index] if 0 <= index < len(options) else ""
    else:
        answer = question.get("answer", "")
    return [f"{question['question']} {answer}", question["explanation"]]


# The kinds whose claims cite passages; a mind map and an audio script cite none. A kind not
# named here keeps the checks of its own module only.
CLAIMS: dict[str, Items | Prose | Bullets] = {
    "report": Prose("markdown", limit=report.MARKDOWN_CHARS),
    "quiz": Items(("questions",), "explanation", "question", _quiz_says),
    "table": Items(("rows",), "source", "row", lambda row: [_said(row, "source")]),
    # A card's front with its back states the fact; the back alone may too.
    "flashcards": Items(
        ("cards",), "back", "card", lambda card: [f"{card['front']}: {card['back']}", card["back"]]
    ),
    "infographic": Items(
        ("figures", "timeline", "comparisons"),
        "source",
        "item",
        lambda item: [_said(item, "source")],
        shows=lambda item: [str(item[name]) for name in ("value", "date") if name in item],
    ),
    "slides": Bullets("slides", "bullets", "slide"),
    "video": Bullets("slides", "bullets", "slide"),
}


@dataclass
class Accepted:
    data: dict[str, Any]
    attributed: set[int] = field(default_factory=set)  # passages only Loupe's markers name
    dropped: int = 0  # claims left out: no passage supports them
    claims: int = 0  # claims weighed
    repeated: int = 0  # claims that said again what an earlier one said: left out, not weighed
    problems: list[str] = field(default_factory=list)  # what was wrong, item by item


def cites(kind: str) -> bool:
    return kind in CLAIMS


def accept(
    kind: str, data: dict[str, Any], passages: list[str], *, translated: bool = False
) -> Accepted:
    """`data` (valid against the kind's schema) with its claims attributed and the
    unsupported ones left out; InvalidOutput when most of them are unsupported, its
    `details` saying what was wrong item by item. `passages[i]` is passage i + 1's text.

    `translated`: the document is written in another language than the passages, where
    comparing words cannot tell support; a claim is then kept on the marker the model gave
    it (its citation shows as weakly supported), and only one without a marker needs words
    (a name, a figure) in common with a passage."""
    layout = CLAIMS.get(kind)
    if layout is None:
        return Accepted(data=data)
    if isinstance(layout, Prose):
        if layout.limit and len(data[layout.field]) >= layout.limit:
            data = {**data, layout.field: finished(data[layout.field])}
        accepted = _accept_prose(data, layout.field, passages, translated)
    elif isinstance(layout, Bullets):
        accepted = _accept_bullets(data, layout, passages, translated)
    else:
        accepted = _accept_items(data, layout, passages, translated)
    if accepted.claims and accepted.dropped / accepted.claims > MOST_UNSUPPORTED:
        raise InvalidOutput(
            f"no passage supports {accepted.dropped} of its {accepted.claims} claims "
            f"({accepted.dropped / accepted.claims:.0%})",
            details=accepted.problems,
        )
    return accepted


def _said_before(claim: str, seen: set[str]) -> bool:
    """Whether `claim` (its markers aside) was made already; a small model falls into a
    loop and writes one card, bullet or sentence twenty times."""
    key = " ".join(MARKER_RE.sub("", claim).lower().split()).strip(" .")
    if key in seen:
        return True
    seen.add(key)
    return False


# Where a sentence (with the markers after it) or a line ends.
SENTENCE_END_RE = re.compile(r"[.!?…](?:\s*\[\d[\d,\s]*\])*(?=\s|$)|\n")


def finished(text: str) -> str:
    """`text` up to its last finished sentence or line."""
    ends = [match.end() for match in SENTENCE_END_RE.finditer(text)]
    return text[: ends[-1]].rstrip() if ends else text


def _best(claims: list[str], passages: list[str]) -> tuple[int, bool]:
    """The passage number that best supports one of `claims`, and whether it does."""
    best, score, supported = 0, -1.0, False
    for claim in claims:
        if not terms(claim):
            continue
        for number, passage in enumerate(passages, start=1):
            support = best_support(claim, passage)
            if support.score > score:
                best, score, supported = number, support.score, support.supported
    return best, supported


NUMBER_RE = re.compile(r"\d+(?:[.,'’]\d+)*")


def stands_in(shown: str, passage: str) -> bool:
    """Whether a figure or date as shown ("67,672", "2001–2007", "8 TiB") stands in the
    passage: its every number (digit groups joined: "67,672" is 67672), or without
    numbers its words."""
    numbers = [re.sub(r"\D", "", number) for number in NUMBER_RE.findall(shown)]
    if not numbers:
        return " ".join(shown.lower().split()) in " ".join(passage.lower().split())
    found = {re.sub(r"\D", "", number) for number in NUMBER_RE.findall(passage)}
    return all(number in found for number in numbers)


def _markers(text: str, passages: int) -> tuple[list[int], list[int]]:
    """The passage numbers `text`'s markers name: those that exist, and those that do not."""
    named = [number for match in MARKER_RE.finditer(text) for number in _numbers(match.group(1))]
    return (
        [number for number in named if 1 <= number <= passages],
        [number for number in named if not 1 <= number <= passages],
    )


def _quoted(text: str) -> str:
    text = " ".join(MARKER_RE.sub("", text).split())
    return "“" + (text if len(text) <= QUOTED_CHARS else text[: QUOTED_CHARS - 1] + "…") + "”"


def _nonexistent(where: str, numbers: list[int]) -> str:
    named = ", ".join(f"[{number}]" for number in numbers)
    return f"{where} cites {named}, which names no passage"


def _accept_items(
    data: dict[str, Any], layout: Items, passages: list[str], translated: bool
) -> Accepted:
    accepted = Accepted(data=dict(data))
    number = 0
    seen: set[str] = set()
    for name in layout.lists:
        kept: list[dict[str, Any]] = []
        for item in data.get(name) or []:
            number += 1
            where = f"{layout.name} {number} {_quoted(layout.says(item)[0])}"
            if _said_before(layout.says(item)[0], seen):
                accepted.repeated += 1
                accepted.problems.append(f"{where} repeats an earlier one; left out")
                continue
            accepted.claims += 1
            marked = str(item.get(layout.cite_in, ""))
            valid, invalid = _markers(marked, len(passages))
            if invalid:
                accepted.problems.append(_nonexistent(where, invalid))
            best, supported = _best(layout.says(item), passages)
            supported = supported or (translated and bool(valid))
            if not supported:
                accepted.dropped += 1
                accepted.problems.append(f"{where}: no passage supports it; left out")
                continue
            missing = [
                shown
                for shown in layout.shows(item)
                if not any(stands_in(shown, passages[n - 1]) for n in {*valid, best} if n)
            ]
            if missing:
                accepted.dropped += 1
                accepted.problems.append(
                    f"{where}: {', '.join(missing)} is not in its passage; left out"
                )
                continue
            if not valid:
                # The model named no passage (or only missing ones): the support check does.
                item = {**item, layout.cite_in: with_marker(marked, best)}
                accepted.attributed.add(best)
            kept.append(item)
        accepted.data[name] = kept
    return accepted


def _accept_bullets(
    data: dict[str, Any], layout: Bullets, passages: list[str], translated: bool
) -> Accepted:
    accepted = Accepted(data=dict(data))
    kept_items: list[dict[str, Any]] = []
    seen: set[str] = set()
    for index, item in enumerate(data.get(layout.lists) or [], start=1):
        kept: list[str] = []
        for bullet in item.get(layout.field) or []:
            where = f"{layout.name} {index}'s bullet {_quoted(bullet)}"
            if _said_before(bullet, seen):
                accepted.repeated += 1
                accepted.problems.append(f"{where} repeats an earlier one; left out")
                continue
            accepted.claims += 1
            valid, invalid = _markers(bullet, len(passages))
            if invalid:
                accepted.problems.append(_nonexistent(where, invalid))
            claim = MARKER_RE.sub("", bullet)
            if not terms(claim):
                accepted.dropped += 1
                accepted.problems.append(f"{where} says nothing; left out")
                continue
            best, supported = _best([claim], passages)
            supported = supported or (translated and bool(valid))
            if not supported:
                accepted.dropped += 1
                accepted.problems.append(f"{where}: no passage supports it; left out")
                continue
            if not valid:
                bullet = with_marker(bullet, best)
                accepted.attributed.add(best)
            kept.append(bullet)
        if kept:
            kept_items.append({**item, layout.field: kept})
        else:
            accepted.problems.append(f"{layout.name} {index} lost every bullet; left out")
    accepted.data[layout.lists] = kept_items
    return accepted


def _accept_prose(
    data: dict[str, Any], name: str, passages: list[str], translated: bool
) -> Accepted:
    written = data[name]
    attribution = attribute_sentences(written, passages)
    text = attribution.text
    accepted = Accepted(data=dict(data), attributed=set(attribution.attributed))
    cut: list[tuple[int, int]] = []
    seen: set[str] = set()
    for start, end in claim_spans(text):
        sentence = text[start:end]
        opening = OPENING_MARKERS_RE.match(sentence)
        if opening:  # the markers opening a sentence belong to the one before it
            start += opening.end()
            sentence = sentence[opening.end() :]
        if not terms(MARKER_RE.sub("", sentence)):
            continue
        if _said_before(sentence, seen):
            accepted.repeated += 1
            accepted.problems.append(f"sentence {_quoted(sentence)} repeats an earlier one")
            cut.append((start, end))
            continue
        accepted.claims += 1
        where = f"sentence {accepted.claims} {_quoted(sentence)}"
        valid, invalid = _markers(sentence, len(passages))
        if invalid:
            accepted.problems.append(_nonexistent(where, invalid))
        _best_number, supported = _best([MARKER_RE.sub("", sentence)], passages)
        supported = supported or (translated and bool(valid))
        if not supported:
            accepted.dropped += 1
            accepted.problems.append(f"{where}: no passage supports it; left out")
            cut.append((start, end))
    for start, end in reversed(cut):
        while end < len(text) and text[end] == " ":  # the space before the next sentence
            end += 1
        text = text[:start] + text[end:]
    accepted.data[name] = _tidy(text)
    # A passage whose every marker Loupe placed stayed attributed only if still cited.
    still = {number for match in MARKER_RE.finditer(text) for number in _numbers(match.group(1))}
    accepted.attributed &= still
    return accepted


LIST_ITEM_RE = re.compile(r"^\s*(?:[-*+]|\d+[.)])?\s*$")
HEADING_RE = re.compile(r"^(#{1,6})\s")


def _tidy(markdown: str) -> str:
    """Markdown after sentences were cut out of it: no emptied list items or lines, no
    heading left with nothing under it."""
    lines = [line.rstrip() for line in markdown.split("\n")]
    lines = [line for line in lines if not line or not LIST_ITEM_RE.match(line)]
    kept: list[str] = []
    for index, line in enumerate(lines):
        heading = HEADING_RE.match(line)
        if heading:
            level = len(heading.group(1))
            following = (
                next_line
                for next_line in lines[index + 1 :]
                if next_line.strip()
                and not ((match := HEADING_RE.match(next_line)) and len(match.group(1)) > level)
            )
            after = next(following, None)
            if after is None or HEADING_RE.match(after):
                continue  # its section lost every sentence
        kept.append(line)
    return re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip()
