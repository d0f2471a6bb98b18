"""One module per kind of generated document: its focus query, JSON schema, instructions to
the chat model, extra checks, extractive fallback and readable text (what gets indexed)."""

from __future__ import annotations

from types import ModuleType

from generation.documents.kinds import (
    audio,
    flashcards,
    infographic,
    mindmap,
    quiz,
    report,
    slides,
    table,
    video,
)

KINDS: dict[str, ModuleType] = {
    "report": report,
    "quiz": quiz,
    "table": table,
    "mindmap": mindmap,
    "infographic": infographic,
    "audio": audio,
    "flashcards": flashcards,
    "slides": slides,
    "video": video,
}


def kind_module(kind: str) -> ModuleType:
    try:
        return KINDS[kind]
    except KeyError:
        raise ValueError(
            f"Unknown kind of document {kind!r}; use one of {', '.join(KINDS)}."
        ) from None
