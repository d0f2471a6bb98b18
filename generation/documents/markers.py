"""The [n] markers of a generated document: checked, renumbered and verified as an answer's
are (generation/citations.py, citations/verification.py), across all its text fields."""

from __future__ import annotations

import re
from typing import Any

from citations.verification import MARKER_RE, verified_citations
from generation.citations import CLOSING_RE, _numbers, map_markers
from generation.citations import MARKER_RE as ANY_MARKER_RE
from generation.documents.structured import InvalidOutput
from retrieval.search import Hit


def require_markers(text: str, passages: int, *, what: str) -> None:
    """InvalidOutput unless `text` cites at least one passage that exists."""
    for match in ANY_MARKER_RE.finditer(text):
        if any(1 <= number <= passages for number in _numbers(match.group(1))):
            return
    raise InvalidOutput(f"{what} cites no passage: put a marker like [1] after each claim")


def with_marker(text: str, number: int) -> str:
    """`text` without markers, with [number] before its closing punctuation (or as the
    whole field when it held markers only)."""
    text = ANY_MARKER_RE.sub("", text).rstrip()
    closing = CLOSING_RE.search(text)
    cut = closing.start() if closing else len(text)
    return f"{text[:cut].rstrip()} [{number}]{text[cut:]}".strip()


ONLY_MARKERS_RE = re.compile(r"^\s*(?:\[\d+\]\s*)+$")


def _claims(data: Any) -> list[str]:
    """The texts that cite, each with its markers: a string that carries its own [n], or
    for an item whose "source" is only markers (a table row, a figure), the item's other
    texts followed by them, so verification weighs what the item says."""
    if isinstance(data, str):
        return [data]
    if isinstance(data, list):
        return [text for value in data for text in _claims(value)]
    if not isinstance(data, dict):
        return []
    claims: list[str] = []
    said: list[str] = []
    markers: list[str] = []
    for value in data.values():
        if isinstance(value, str) and ONLY_MARKERS_RE.match(value):
            markers.append(value.strip())
        elif isinstance(value, str):
            said.append(value)
        elif isinstance(value, list) and all(isinstance(item, str) for item in value):
            said += value
        else:
            claims += _claims(value)
    if markers:
        # One sentence: verification gives a marker the sentence before it.
        claims.append(
            "; ".join(part.strip().rstrip(".!?…") for part in said) + ". " + " ".join(markers)
        )
    else:
        claims += said
    return claims


def renumber(data: Any, passages: int, order: list[int]) -> Any:
    """`data` with every string's markers mapped to one shared, dense numbering (`order`
    is extended: order[i] is the passage that citation i + 1 names)."""
    if isinstance(data, str):
        if not ANY_MARKER_RE.search(data):
            return data
        return map_markers(data, passages, order=order).text
    if isinstance(data, dict):
        return {key: renumber(value, passages, order) for key, value in data.items()}
    if isinstance(data, list):
        return [renumber(value, passages, order) for value in data]
    return data


def cite(
    data: dict[str, Any], hits: list[Hit], *, attributed: set[int] | None = None
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The data renumbered, and one citation per [n] (the fields of a DocumentCitation):
    its chunk, and the quote that best supports the sentences citing it; `attributed`: the
    passage numbers only Loupe's markers name (generation/documents/acceptance.py)."""
    order: list[int] = []
    mapped = renumber(data, len(hits), order)
    cited = {n: hits[number - 1] for n, number in enumerate(order, start=1)}
    text = "\n\n".join(piece for piece in _claims(mapped) if MARKER_RE.search(piece))
    placed = {n for n, number in enumerate(order, start=1) if number in (attributed or set())}
    return mapped, verified_citations(text, cited, attributed=placed)
