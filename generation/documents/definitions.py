"""Definitions in a source's sentences (language/definitions.py): an offline report's overview
and its key sentences prefer the sentences that say what a thing is."""

from __future__ import annotations

from dataclasses import dataclass

from generation.documents.reading import Sentence
from language.definitions import defined_term


@dataclass(frozen=True)
class Definition:
    term: str  # as written in the sentence, without quotes
    sentence: Sentence


def definition_of(sentence: Sentence) -> Definition | None:
    """The definition a sentence makes, if it makes one and reads well alone."""
    term = defined_term(sentence.text, sentence.language)
    return Definition(term=term, sentence=sentence) if term else None
