"""What a kind asks of one passage when a document is written a passage at a time
(GENERATION_BY_PASSAGE, generation/documents/by_passage.py): the reply's schema, the
instructions, and how the replies become the kind's data.

The model writes no markers here: it sees one passage, so Loupe cites that passage after
every claim itself (`cited`), and acceptance checks that the passage supports the claim."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from generation.documents.markers import with_marker
from generation.documents.structured import InvalidOutput


@dataclass(frozen=True)
class Piece:
    schema: dict[str, Any]  # one reply, for one passage
    instructions: str
    max_tokens: int
    # The part of the kind's data one reply gives, every claim cited [n] (n: its passage).
    part: Callable[[dict[str, Any], int], dict[str, Any]]
    # The kind's data from its parts, in the passages' order, under a title.
    assemble: Callable[[list[dict[str, Any]], str], dict[str, Any]]
    title: Callable[[str], str]  # the document's title, from the notebook's
    most: int = 0  # the most passages asked (0: GENERATION_PASSAGES, by_passage.asked_of)
    # The reply kept to what the model set out itself, what it copied from the passage (its
    # second argument) left out; InvalidOutput when nothing is left.
    own_words: Callable[[dict[str, Any], str], dict[str, Any]] | None = None


def cited(text: str, number: int) -> str:
    """`text` ending with the marker of passage `number`."""
    return with_marker(text, number)


def joined(parts: list[dict[str, Any]], field: str) -> list[Any]:
    """The items of `field` of every part, in order."""
    return [item for part in parts for item in part.get(field, [])]


ONE_PASSAGE = """You are given one part of the user's documents, with where it stands. Use \
only what it states: no outside knowledge. Write about the subject itself, as the documents \
do, for a reader who has not seen this part. Write no [n] markers: Loupe cites it itself. \
If it is only a list, a table of names or a heading, write about the one fact in it a reader \
would want to know."""


HEADING_WORDS = 8  # a heading line in a page: a few words, no figure, no sentence
PUNCTUATION_RE = re.compile(r"[\d.,;:!?]")


def heading_lines(passage: str) -> list[set[str]]:
    """The words of each line of `passage` that reads like a heading: a section's title or
    a table's column headings ("package popcon size description")."""
    return [
        set(line.lower().split())
        for line in passage.splitlines()
        if 2 <= len(line.split()) <= HEADING_WORDS and not PUNCTUATION_RE.search(line)
    ]


# What prose copied from the page looks like: list dots, line breaks, a table's counts (a
# letter and a figure: "V:95, I:964"), or the place a part was given with ("From Debian
# Reference, …").
COPIED_RE = re.compile(r"[•▪◦]|\n|\b[A-Z]:\d|^From [^:]{3,}:")
TABLE_ROW_FIGURES = 3  # figures one after another: a table's row, never prose ("V:95, I:964 425")
# A numbered heading copied as a claim ("Section 3.1.1: The power-on event", "3.1.1 Stage 1").
NUMBERED_HEADING_RE = re.compile(
    r"^(?:(?:Section|Chapter|Abschnitt|Kapitel)\s+\d+(?:\.\d+)*|\d+\.\d+\.\d+)\b", re.IGNORECASE
)


def table_line(text: str, passage: str) -> bool:
    """Whether `text` is a line of the passage's table (or a heading) copied as it stands,
    not a claim: figures one after another, or more than half its words figures ("knockd
    V:0, I:3"), all of them the words of one heading line ("popcon size
    description"), or a numbered heading ("Section 3.1.1: The power-on event")."""
    tokens = text.lower().replace("…", " ").split()
    if NUMBERED_HEADING_RE.match(text.strip()) and len(tokens) <= HEADING_WORDS:
        return True
    figured = [any(char.isdigit() for char in token) for token in tokens]
    figures = sum(figured)
    if figures >= 2 and 2 * figures > len(tokens):
        return True
    run = 0
    for is_figure in figured:
        run = run + 1 if is_figure else 0
        if run >= TABLE_ROW_FIGURES:
            return True
    words = {token.strip(".,;:") for token in tokens}
    return len(words) >= 2 and any(words <= heading for heading in heading_lines(passage))


def without_table_lines(field: str) -> Callable[[dict[str, Any], str], dict[str, Any]]:
    """An `own_words` that leaves out the items of the reply's `field` (bullets, sentences)
    copied from a table of the passage; InvalidOutput when none is left."""

    def own(reply: dict[str, Any], passage: str) -> dict[str, Any]:
        kept = [item for item in reply[field] if not table_line(item, passage)]
        if not kept:
            raise InvalidOutput(
                f"every one of the {field} is a line of the text's table or a heading copied "
                "as it stands; say in a short sentence what the table tells"
            )
        return {**reply, field: kept}

    return own
