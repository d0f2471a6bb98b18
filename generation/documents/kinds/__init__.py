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


# What the studio makes without a chat model, from the sources' own words and structure: a
# report of each chapter's key sentences, quoted, a mind map of the sources' outline, and a
# deck of the same key sentences, a slide per chapter (also narrated as a video). Every other
# kind would be made of sentence fragments ("Usually this" as a quiz answer, a "debate" of
# stitched quotes); a junk document is worse than none, so they need a model.
WITHOUT_A_MODEL = ("report", "mindmap", "slides", "video")


def offered(*, with_a_model: bool) -> list[str]:
    """The kinds a person may ask for: all of them with a chat model."""
    return list(KINDS) if with_a_model else [kind for kind in KINDS if kind in WITHOUT_A_MODEL]


def kind_module(kind: str) -> ModuleType:
    try:
        return KINDS[kind]
    except KeyError:
        raise ValueError(
            f"Unknown kind of document {kind!r}; use one of {', '.join(KINDS)}."
        ) from None
