"""Flashcards: a term or question on the front, the answer on the back with the [n] of the
passage that states it."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _

from generation.documents.markers import require_markers
from generation.documents.pieces import ONE_PASSAGE, Piece, cited, joined
from generation.documents.structured import InvalidOutput

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


CARD_SCHEMA = SCHEMA["properties"]["cards"]["items"]
CARDS_PER_PASSAGE = 2


FRONT_WORDS = 8
# A front that asks no question is a term: one of more words than this is a line copied
# from the page ("getent passwd benutzername Konteninformationen von benutzername anzeigen",
# a table's row), however short for a question.
TERM_WORDS = 5


def _part(reply: dict[str, Any], number: int) -> dict[str, Any]:
    """The cards, each back cited; InvalidOutput for a front that is a sentence (the start
    of a fact whose end is on the back), a card that says the same on both sides, or a back
    that only announces its answer ("There are three key factors:")."""
    for card in reply["cards"]:
        front, back = card["front"].strip(), card["back"].strip()
        if len(front.split()) > FRONT_WORDS or back[:1].islower():
            raise InvalidOutput(
                f"the front {front!r} is the start of a sentence its back goes on with; make "
                f"it a term or a short question of at most {FRONT_WORDS} words, and the back "
                "a whole sentence"
            )
        if "?" not in front and len(front.split()) > TERM_WORDS:
            raise InvalidOutput(
                f"the front {front!r} is neither a term nor a question; make it a key term "
                f"of at most {TERM_WORDS} words, or a short question"
            )
        if front.lower() == back.lower():
            raise InvalidOutput(f"the card {front!r} says the same on both sides")
        if back.endswith(":"):
            # "Es gibt drei Schlüsselfaktoren, die … bestimmen:" and nothing after it.
            raise InvalidOutput(
                f"the back of {front!r} ends with a colon, announcing what it does not say; "
                "give the answer itself"
            )
    return {"cards": [{**card, "back": cited(card["back"], number)} for card in reply["cards"]]}


BY_PASSAGE = Piece(
    schema={
        "type": "object",
        "properties": {
            "cards": {
                "type": "array",
                "minItems": 1,
                "maxItems": CARDS_PER_PASSAGE,
                "items": CARD_SCHEMA,
            }
        },
        "required": ["cards"],
        "additionalProperties": False,
    },
    instructions=f"""You write flashcards from one part of the user's documents: 1 or \
{CARDS_PER_PASSAGE} cards on its most important terms or facts.

- "front": a key term (1 to 4 words), or a short question a learner would be asked.
- "back": the answer in one or two sentences, in the document's own words.
{ONE_PASSAGE}""",
    max_tokens=400,
    part=_part,
    assemble=lambda parts, title: {"title": title, "cards": joined(parts, "cards")},
    title=lambda notebook: _("Flashcards: %(notebook)s") % {"notebook": notebook},
    most=SCHEMA["properties"]["cards"]["maxItems"] // CARDS_PER_PASSAGE,
)


def check(data: dict[str, Any], passages: int) -> None:
    for number, card in enumerate(data["cards"], start=1):
        require_markers(card["back"], passages, what=f"card {number}'s back")


def readable(data: dict[str, Any]) -> str:
    lines = [f"# {data['title']}", ""]
    for card in data["cards"]:
        lines += [f"## {card['front']}", "", card["back"], ""]
    return "\n".join(lines)
