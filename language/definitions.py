"""The term a sentence defines, if it defines one: "X is a …", "X means …", "… is called X"
(and their German forms). The offline quizzes and flashcards ask about such terms
(generation/documents/definitions.py); an extractive summary prefers such sentences, which
say what things are (ingest/summaries.py)."""

from __future__ import annotations

import re

from language.sentences import stands_alone

MAX_TERM_WORDS = 4
SHORT_ACRONYM = 5
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


def defined_term(text: str, language: str = "") -> str | None:
    """The term the sentence defines, if it defines one and reads well alone."""
    if not stands_alone(text, language):
        return None
    for pattern in (SUBJECT_RE, NAMED_RE):
        match = pattern.search(text)
        if match and not NOT_DEFINING_RE.search(text[match.end() :][:40]):
            raw = next(group for group in match.groups() if group)
            term = _clean_term(raw, language)
            if term:
                return term
    return None


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
    # Words in capitals for emphasis ("a detailed map called the ”SOURCE CODE”"), not
    # acronyms ("GNU GPL"): a quiz would offer it shouting among the other options.
    if len(words) > 1 and term.isupper() and any(len(word) > SHORT_ACRONYM for word in words):
        return None
    return term
