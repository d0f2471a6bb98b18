"""What a kind asks of one passage when a document is written a passage at a time
(GENERATION_BY_PASSAGE, generation/documents/by_passage.py): the reply's schema, the
instructions, and how the replies become the kind's data.

The model writes no markers here: it sees one passage, so Loupe cites that passage after
every claim itself (`cited`), and acceptance checks that the passage supports the claim."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from generation.documents.markers import with_marker


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
    most: int = 0  # the most passages asked (0: every passage the generator read)
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
