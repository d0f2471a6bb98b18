"""Definitions in a source's sentences, for quizzes and flashcards made offline: each with the
term it defines (library/definitions.py) and what kind of term that is, so that a quiz offers
wrong answers of the same kind."""

from __future__ import annotations

import re
from dataclasses import dataclass

from generation.documents.reading import Sentence
from library.definitions import QUOTES, defined_term


@dataclass(frozen=True)
class Definition:
    term: str  # as written in the sentence, without quotes
    sentence: Sentence
    kind: str  # "acronym", "command", "name" or "phrase": what answers can stand in for it


def term_kind(term: str) -> str:
    if re.fullmatch(r"[A-Z][A-Z0-9-]{1,7}s?", term):
        return "acronym"
    if re.search(r"\(\d\)|[/_.]", term) or (term.islower() and " " not in term):
        return "command"
    if term[0].isupper():
        return "name"
    return "phrase"


def definition_of(sentence: Sentence) -> Definition | None:
    """The definition a sentence makes, if it makes one and reads well alone."""
    term = defined_term(sentence.text, sentence.language)
    return Definition(term=term, sentence=sentence, kind=term_kind(term)) if term else None


def definitions(sentences: list[Sentence]) -> list[Definition]:
    """Each term's first definition, in reading order."""
    found: dict[str, Definition] = {}
    for sentence in sentences:
        definition = definition_of(sentence)
        if definition and definition.term.casefold() not in found:
            found[definition.term.casefold()] = definition
    return list(found.values())


def blanked(text: str, term: str, blank: str) -> str:
    """`text` with every whole-word use of `term` (quoted or not) replaced by `blank`."""
    pattern = re.compile(
        rf"[{QUOTES}]?(?<![\w-]){re.escape(term)}(?![\w-])[{QUOTES}]?", re.IGNORECASE
    )
    return pattern.sub(blank, text)
