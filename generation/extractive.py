"""The offline answerer: the retrieved sentences that best match the question, each cited.

No language model runs here; the answer is made of the documents' own sentences. It is
labelled "extractive" wherever it is shown, so nobody mistakes it for a generated answer.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

WORD_RE = re.compile(r"\w+")
SENTENCE_END_RE = re.compile(r"(?<=[.!?…])\s+(?=[\"'“„(\[]?[\w])|\n\s*\n")
MAX_SENTENCES = 3
MAX_SENTENCE_CHARS = 600
# Very common words carry no meaning for matching (English and German).
# fmt: off
STOPWORDS = frozenset((
        "a", "an", "and", "are", "as", "at", "be", "been", "but", "by", "can", "could", "did",
        "do", "does", "for", "from", "had", "has", "have", "how", "i", "if", "in", "into", "is",
        "it", "its", "may", "more", "most", "no", "not", "of", "on", "or", "our", "so", "such",
        "than", "that", "the", "their", "them", "then", "there", "these", "they", "this",
        "those", "to", "was", "we", "were", "what", "when", "where", "which", "who", "whom",
        "why", "will", "with", "would", "you", "your", "der", "die", "das", "den", "dem", "des",
        "ein", "eine", "einer", "eines", "einem", "einen", "und", "oder", "aber", "ist", "sind",
        "war", "waren", "wird", "werden", "wurde", "wurden", "hat", "haben", "hatte", "im",
        "ins", "am", "auf", "aus", "bei", "mit", "nach", "von", "vor", "zu", "zum", "zur", "für",
        "über", "unter", "um", "wie", "wer", "wo", "wann", "warum", "welche", "welcher",
        "welches", "es", "er", "sie", "wir", "ihr", "ich", "du", "nicht", "kein", "keine",
        "auch", "noch", "nur", "sich", "dass", "als",
))
# fmt: on
STEM_CHARS = 5  # compare word beginnings so "vaccines" meets "vaccine", "Impfung" "Impfungen"


@dataclass(frozen=True)
class Sentence:
    text: str
    passage: int  # 1-based passage number
    position: int


def _terms(text: str) -> list[str]:
    words = (word.lower() for word in WORD_RE.findall(text))
    return [word[:STEM_CHARS] for word in words if word not in STOPWORDS and len(word) > 1]


def split_sentences(text: str) -> list[str]:
    # Join lines broken inside sentences. Lines are stripped first, in linear time: the regex
    # this replaces, [ \t]*\n[ \t]*(?!\n), rescanned a run of spaces from each of its
    # characters, and a file padded with a megabyte of them took minutes.
    stripped = "\n".join(line.strip(" \t") for line in text.split("\n"))
    flat = re.sub(r"\n(?!\n)", " ", stripped)
    pieces = (piece.strip() for piece in SENTENCE_END_RE.split(flat))
    return [piece for piece in pieces if piece and WORD_RE.search(piece)]


def answer(
    question: str,
    passages: list[str],
    similarities: list[float],
    *,
    limit: int = MAX_SENTENCES,
) -> str:
    """Pick up to `limit` sentences (three unless the notebook's chat length says otherwise,
    generation/chat_style.py); each ends with the [n] of the passage it came from."""
    question_terms = set(_terms(question))
    sentences = [
        Sentence(text=text[:MAX_SENTENCE_CHARS], passage=number, position=position)
        for number, passage in enumerate(passages, start=1)
        for position, text in enumerate(split_sentences(passage))
    ]
    if not sentences:
        return ""
    # Inverse document frequency over the retrieved sentences: a question word that
    # appears everywhere in them says less than one found in a single sentence.
    sentence_terms = [set(_terms(sentence.text)) for sentence in sentences]
    frequency = {term: sum(term in terms for terms in sentence_terms) for term in question_terms}
    idf = {term: math.log(1 + len(sentences) / (1 + count)) for term, count in frequency.items()}

    def score(index: int) -> float:
        matched = question_terms & sentence_terms[index]
        lexical = sum(idf[term] for term in matched)
        length = max(len(sentence_terms[index]), 1)
        # Prefer sentences from passages the vector search ranked higher.
        return lexical / math.sqrt(length + 4) + 0.2 * similarities[sentences[index].passage - 1]

    ranked = sorted(range(len(sentences)), key=score, reverse=True)
    chosen = [index for index in ranked if question_terms & sentence_terms[index]][:limit]
    if not chosen:
        # No sentence shares a word with the question: quote the best passage's opening.
        chosen = [index for index, sentence in enumerate(sentences) if sentence.passage == 1][:2]
    chosen.sort(key=lambda index: (sentences[index].passage, sentences[index].position))
    return " ".join(f"{sentences[index].text} [{sentences[index].passage}]" for index in chosen)
