"""An audio overview: a conversation script for two voices (A and B), then spoken by the
speech helper's synthesize_dialogue into an MP3."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _

from generation.documents.extract import key_sentences, source_sentences
from generation.documents.inputs import Inputs

FOCUS = "main findings, surprising facts and open questions worth discussing"
SENTENCES_PER_SOURCE = 4

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "minLength": 1, "maxLength": 200},
        "turns": {
            "type": "array",
            "minItems": 2,
            "maxItems": 60,
            "items": {
                "type": "object",
                "properties": {
                    "speaker": {"enum": ["A", "B"]},
                    "text": {"type": "string", "minLength": 1, "maxLength": 1500},
                },
                "required": ["speaker", "text"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["title", "turns"],
    "additionalProperties": False,
}

INSTRUCTIONS = """You write the script of a short audio overview of the user's documents: \
two hosts, "A" and "B", talk about what the documents say, in about 12 to 20 turns of a \
few sentences each, in the documents' language. Use only facts from the material. The \
script is spoken aloud: no [n] markers, no Markdown, no stage directions."""


def check(data: dict[str, Any], passages: int) -> None:
    return None  # the schema says it all: a spoken script cites nothing


def extractive(inputs: Inputs, *, notebook_title: str) -> dict[str, Any]:
    """Host A introduces each source; host B reads its key sentences."""
    turns = [
        {
            "speaker": "A",
            "text": _(
                "This is an overview of the notebook %(notebook)s, read from its sources' "
                "own sentences."
            )
            % {"notebook": notebook_title},
        }
    ]
    for source in inputs.sources:
        quotes = key_sentences(source_sentences(inputs, source), SENTENCES_PER_SOURCE)
        if not quotes:
            continue
        turns.append(
            {"speaker": "A", "text": _("What does %(title)s say?") % {"title": source.title}}
        )
        turns.append({"speaker": "B", "text": " ".join(quote.text for quote in quotes)})
    return {
        "title": _("Audio overview: %(notebook)s") % {"notebook": notebook_title},
        "turns": turns,
    }


def readable(data: dict[str, Any]) -> str:
    lines = [f"# {data['title']}", ""]
    lines += [f"{turn['speaker']}: {turn['text']}" for turn in data["turns"]]
    return "\n\n".join(lines)
