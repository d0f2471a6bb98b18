"""Flashcards: a term or question on the front, the answer on the back with the [n] of the
passage that states it."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _

from generation.documents.definitions import definitions
from generation.documents.figures import clipped
from generation.documents.inputs import Inputs
from generation.documents.kinds.quiz import spread
from generation.documents.markers import require_markers
from generation.documents.reading import Sentence, central, cite, read_sentences, source_chunks
from library.sentences import stands_alone

FOCUS = "definitions, key terms and the facts that explain them"
CARDS = 16

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "minLength": 1, "maxLength": 200},
        "cards": {
            "type": "array",
            "minItems": 1,
            "maxItems": 40,
            "items": {
                "type": "object",
                "properties": {
                    "front": {"type": "string", "minLength": 1, "maxLength": 200},
                    "back": {"type": "string", "minLength": 1, "maxLength": 600},
                },
                "required": ["front", "back"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["title", "cards"],
    "additionalProperties": False,
}

INSTRUCTIONS = f"""You write about {CARDS} flashcards on the user's documents, using only the \
numbered passages you are given.

- "front": a key term, or a short question (a few words).
- "back": the answer in one or two sentences, ending with the [n] marker of the passage that \
states it. Never invent a marker; never cite the summaries."""


def check(data: dict[str, Any], passages: int) -> None:
    for number, card in enumerate(data["cards"], start=1):
        require_markers(card["back"], passages, what=f"card {number}'s back")


def extractive(inputs: Inputs, *, notebook_title: str) -> dict[str, Any]:
    """A card per term the sources define: the term on the front, its definition on the
    back, from every major section in turn; too few definitions, and sections make up the
    rest: a section's title on the front, its key sentence on the back."""
    cards: list[dict[str, Any]] = []
    for source in inputs.sources:
        sentences = read_sentences(source_chunks(source))
        for definition in spread(definitions(sentences)):
            cards.append({"front": definition.term, "back": _back(inputs, definition.sentence)})
        by_section: dict[str, list[Sentence]] = {}
        defined = {card["back"] for card in cards}
        for sentence in sentences:
            if (
                sentence.section
                and stands_alone(sentence.text, sentence.language)
                and not any(back.startswith(sentence.text) for back in defined)
            ):
                by_section.setdefault(sentence.section[-1], []).append(sentence)
        among = list(by_section.values())
        for title, candidates in by_section.items():
            if len(cards) >= CARDS:
                break
            if title.casefold() not in {card["front"].casefold() for card in cards}:
                for sentence in central(candidates, among=among, limit=1):
                    cards.append({"front": clipped(title, 200), "back": _back(inputs, sentence)})
    return {
        "title": _("Flashcards: %(notebook)s") % {"notebook": notebook_title},
        "cards": cards[:CARDS],
    }


def _back(inputs: Inputs, sentence: Sentence) -> str:
    return f"{sentence.text} {cite(inputs, sentence.chunk)}"


def readable(data: dict[str, Any]) -> str:
    lines = [f"# {data['title']}", ""]
    for card in data["cards"]:
        lines += [f"## {card['front']}", "", card["back"], ""]
    return "\n".join(lines)
