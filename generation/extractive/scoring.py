"""How well each unit answers the question: the question's words it holds (rarer ones count
more), its passage's rank, its section's title and the closeness of its part of the passage;
a manual's own question lends its score to the sentence after it."""

from __future__ import annotations

import math

from generation.extractive.candidates import Candidate, Passage, singular_terms
from generation.extractive.weights import (
    CLOSENESS_WEIGHT,
    MIN_NEW_TERMS,
    MIN_SCORED_TERMS,
    QUESTION_LEND,
    RANK_WEIGHT,
    RESTATING_SHARE,
    SECTION_WEIGHT,
)
from language.words import LONE_DIGIT_RE, WORD_RE

# How people phrase questions, not what they ask about (beside language.words.STOPWORDS).
# fmt: off
QUESTION_WORDS = frozenset((
    "can", "do", "i'm", "me", "my", "mine", "get", "gets", "need", "want", "should", "way",
    "many", "much", "all", "any", "every", "up", "out", "tell", "someone",
    "something", "anything", "there", "kann", "können", "kannst", "muss", "soll", "sollte",
    "alle", "jeden", "einfach", "gar",
    "mich", "mir", "mein", "meine", "meinen", "meinem", "meiner", "man", "ob", "wenn",
    "ohne", "beim", "lasse", "bekomme", "komme", "kommt", "mache", "gibt", "welchem",
    "welchen",
))
# fmt: on


def question_terms(question: str) -> set[str]:
    """The question's terms, without the words of how people ask (QUESTION_WORDS)."""
    asked = (word for word in WORD_RE.findall(question) if word.casefold() not in QUESTION_WORDS)
    return set(singular_terms(" ".join(asked)))


def scores_of(question: str, candidates: list[Candidate], passages: list[Passage]) -> list[float]:
    """How well each candidate answers the question (0: it shares no word with it)."""
    asked = question_terms(question)
    # A number of one digit the question names ("record number 5") is no term, but asks for
    # the unit that holds it. Counted apart, so that a question without one scores as before.
    digits = set(LONE_DIGIT_RE.findall(question))
    held = [
        digits & set(LONE_DIGIT_RE.findall(c.unit.text)) if digits else set() for c in candidates
    ]
    # Inverse document frequency over the retrieved units: a question word that appears
    # everywhere in them says less than one found in a single unit.
    frequency = {term: sum(term in c.terms for c in candidates) for term in asked}
    frequency |= {digit: sum(digit in found for found in held) for digit in digits}
    idf = {term: math.log(1 + len(candidates) / (1 + n)) for term, n in frequency.items()}
    weight = sum(idf.values()) or 1.0
    section_share = [
        sum(idf[term] for term in asked & set(singular_terms(" ".join(p.section[-2:])))) / weight
        for p in passages
    ]

    known = [c.closeness for c in candidates if c.closeness is not None]
    low, high = (min(known), max(known)) if known else (0.0, 0.0)

    def score(index: int, candidate: Candidate) -> float:
        lexical = sum(idf[term] for term in asked & candidate.terms)
        lexical += sum(idf[digit] for digit in held[index])
        if not lexical:
            return 0.0
        close = (
            (candidate.closeness - low) / (high - low)
            if candidate.closeness is not None and high > low
            else 0.0
        )
        total = (
            lexical / math.sqrt(max(len(candidate.terms), MIN_SCORED_TERMS) + 4)
            + RANK_WEIGHT / (candidate.passage + 1)
            + SECTION_WEIGHT * section_share[candidate.passage]
            + CLOSENESS_WEIGHT * close
        )
        told = len(candidate.terms - asked)
        return total * RESTATING_SHARE if told < MIN_NEW_TERMS else total

    scores = [score(index, candidate) for index, candidate in enumerate(candidates)]
    # The manual's own question is not an answer; the sentence after it likely is.
    for index, candidate in enumerate(candidates[:-1]):
        following = candidates[index + 1]
        if candidate.unit.question and following.passage == candidate.passage:
            scores[index + 1] = max(scores[index + 1], QUESTION_LEND * scores[index])

    return scores
