"""Turning the [n] markers an answer contains into verified, densely numbered citations."""

from __future__ import annotations

import re
from dataclasses import dataclass

# "[3]", "[1, 2]", "[1][2]", "[2-4]"; up to three digits so "[2020]" stays a year.
MARKER_RE = re.compile(r"\[\s*(\d{1,3}(?:\s*(?:,|;|-|–)\s*\d{1,3})*)\s*\]")
SPACE_BEFORE_PUNCT_RE = re.compile(r"[ \t]+([.,;:!?)])")
DOUBLE_SPACE_RE = re.compile(r"[ \t]{2,}")


@dataclass(frozen=True)
class MappedAnswer:
    text: str
    # order[i] is the 1-based passage number that the answer's citation [i + 1] names.
    order: list[int]


def _numbers(group: str) -> list[int]:
    numbers: list[int] = []
    for part in re.split(r"\s*[,;]\s*", group.strip()):
        bounds = re.split(r"\s*[-–]\s*", part)
        if len(bounds) == 2:
            low, high = int(bounds[0]), int(bounds[1])
            if 0 < high - low < 20:
                numbers.extend(range(low, high + 1))
                continue
        numbers.extend(int(bound) for bound in bounds)
    return numbers


def map_markers(text: str, passage_count: int, *, order: list[int] | None = None) -> MappedAnswer:
    """Keep markers that name a passage, strip the rest, renumber by first appearance.

    `order` continues a numbering begun in other texts (a generated document's several
    fields share one list of citations); it is extended in place.
    """
    order = [] if order is None else order

    def replace(match: re.Match[str]) -> str:
        kept: list[int] = []
        for number in _numbers(match.group(1)):
            if not 1 <= number <= passage_count:
                continue  # names no passage: it must not look like a source
            if number not in order:
                order.append(number)
            new = order.index(number) + 1
            if new not in kept:
                kept.append(new)
        return "".join(f"[{n}]" for n in kept)

    mapped = MARKER_RE.sub(replace, text)
    mapped = re.sub(r"(\[\d+\])(?:\s*\1)+", r"\1", mapped)  # "[1][1]", "[1] [1]" → "[1]"
    mapped = SPACE_BEFORE_PUNCT_RE.sub(r"\1", mapped)
    mapped = DOUBLE_SPACE_RE.sub(" ", mapped)
    mapped = re.sub(r"[ \t]+\n", "\n", mapped)  # no trailing space where a marker ended a line
    return MappedAnswer(text=mapped.strip(), order=order)
