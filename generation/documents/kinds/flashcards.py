"""Flashcards: a term or question on the front, the answer on the back with the [n] of the
passage that states it."""

from __future__ import annotations

from typing import Any

from generation.documents.markers import require_markers

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


def readable(data: dict[str, Any]) -> str:
    lines = [f"# {data['title']}", ""]
    for card in data["cards"]:
        lines += [f"## {card['front']}", "", card["back"], ""]
    return "\n".join(lines)
