"""Definitions in a source's sentences, for quizzes and flashcards made offline: "X is a …",
"X means …", "… is called X" (and their German forms), each with the term it defines and
what kind of term that is, so that a quiz offers wrong answers of the same kind."""

from __future__ import annotations

import re
from dataclasses import dataclass

from generation.documents.reading import Sentence
from library.sentences import stands_alone

MAX_TERM_WORDS = 4
MAX_TERM_CHARS = 40
QUOTES = "\"'“”„‘’«»"

_TERM = r"([^,;:()!?]{2,60}?)"
# The term is the sentence's subject: "MTU is the maximum …", "Ein Inode ist eine …".
SUBJECT_RE = re.compile(
    rf"^(?:(?:The|A|An|Der|Die|Das|Ein|Eine)\s+)?{_TERM}\s+"
    r"(?:(?:is|are)\s+(?:a|an|the|one of the)\b|means\b|refers to\b|stands for\b"
    r"|is defined as\b|is short for\b|(?:ist|sind)\s+(?:ein|eine|einer|eines|der|die|das)\b"
    r"|bedeutet\b|bezeichnet\b|steht für\b)"
)
# The term is named by the sentence: "… is called the directory tree.", "… wird Inode genannt."
NAMED_RE = re.compile(
    r"(?<!-)\b(?:called|known as|referred to as)\s+(?:the\s+|a\s+|an\s+)?"
    rf"{_TERM}(?=\s*[,.;(]|$)"
    rf"|\b(?:wird|werden)\s+(?:auch\s+)?(?:als\s+)?(?:der\s+|die\s+|das\s+)?{_TERM}\s+(?:bezeichnet|genannt)\b"
)
# Words that start no term: pronouns, quantifiers, and words that make a clause of it.
NOT_A_TERM_START = {
    "it", "this", "these", "that", "those", "there", "here", "what", "which", "who", "each",
    "every", "all", "some", "many", "most", "any", "your", "our", "its", "their", "his", "her",
    "you", "we", "they", "one", "if", "when", "while", "although", "because", "since", "so",
    "es", "dies", "diese", "dieser", "dieses", "jeder", "jede", "jedes", "alle", "einige",
    "viele", "man", "sie", "wir", "wenn", "weil", "da", "ihr", "ihre", "sein", "seine",
    "after", "before", "in", "on", "by", "for", "with", "to", "from", "as", "at", "of",
    "nach", "vor", "im", "am", "mit", "für", "von", "zu", "zum", "zur", "als", "bei", "auf",
    "das", "hierbei", "dabei", "dazu", "damit", "dadurch", "ähnlich", "auch", "also",
}  # fmt: skip
# Words that make a phrase a reference to something said before, not a term.
NOT_IN_A_TERM_RE = re.compile(
    r"\b(?:\d+(?:st|nd|rd|th)|first|second|third|last|next|other|two|three|ones?|itself|"
    r"erste\w*|zweite\w*|letzte\w*|andere\w*|beide\w*|zwei|drei|selbst)\b",
    re.I,
)
CLAUSE_WORDS_RE = re.compile(
    r"\b(?:is|are|was|were|be|can|will|may|must|should|has|have|does|do|not|ist|sind|war|kann|"
    r"wird|muss|soll|hat|haben|nicht|und|and|or|oder|of the|der|des)\b",
    re.I,
)


# "X is an exception", "X ist ein Beispiel": the form of a definition, saying nothing of X.
NOT_DEFINING_RE = re.compile(
    r"^\s*(?:(?:good|bad|typical|common|notable)\s+)?(?:exception|example|Ausnahme|Beispiel)\b",
    re.I,
)


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


def _clean_term(raw: str, language: str) -> str | None:
    term = " ".join(raw.split()).strip(QUOTES + " ")
    words = term.split()
    if not words or len(words) > MAX_TERM_WORDS or len(term) > MAX_TERM_CHARS:
        return None
    if words[0].lower() in NOT_A_TERM_START or CLAUSE_WORDS_RE.search(term):
        return None
    if NOT_IN_A_TERM_RE.search(term) or term.endswith("ing") or words[0].endswith("ing"):
        return None
    if "/" in term or not re.search(r"[^\W\d_]{2}", term) or any(q in term for q in QUOTES):
        return None
    # German capitalises its nouns: a term led by a small word is an adjective's phrase
    # ("populärer Anwendungsfall"), and one with "von" a clause ("Lesen von Skripten").
    if language == "de" and len(words) > 1 and (words[0][0].islower() or "von" in words):
        return None
    return term


def definition_of(sentence: Sentence) -> Definition | None:
    """The definition a sentence makes, if it makes one and reads well alone."""
    if not stands_alone(sentence.text, sentence.language):
        return None
    for pattern in (SUBJECT_RE, NAMED_RE):
        match = pattern.search(sentence.text)
        if match and not NOT_DEFINING_RE.search(sentence.text[match.end() :][:40]):
            raw = next(group for group in match.groups() if group)
            term = _clean_term(raw, sentence.language)
            if term:
                return Definition(term=term, sentence=sentence, kind=term_kind(term))
    return None


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
