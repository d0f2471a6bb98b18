"""The answer: the best-scoring units, each with the neighbours it needs, until the length
asked for is quoted, then rendered in reading order."""

from __future__ import annotations

import re

from generation.extractive.candidates import Passage, candidates_of, quotable
from generation.extractive.neighbours import follows, with_neighbours
from generation.extractive.rendering import in_reading_order, render, shown_length
from generation.extractive.scoring import question_terms, scores_of
from generation.extractive.weights import CHARS_PER_SENTENCE, MAX_SENTENCES, RELATIVE_FLOOR

# A question about the document itself may be answered by what it says of itself.
ASKS_ABOUT_DOCUMENT_RE = re.compile(
    r"\b(?:document|manual|chapter|section|guide|book|dokument|handbuch|kapitel|abschnitt"
    r"|anleitung|buch)",
    re.IGNORECASE,
)


def answer(question: str, passages: list[Passage], *, limit: int = MAX_SENTENCES) -> str:
    """Up to `limit` chosen sentences (three unless the notebook's chat length says
    otherwise, generation/chat_style.py) with the neighbours they need; each ends with the
    [n] of the passage it came from."""
    candidates = candidates_of(passages)
    if not candidates:
        return ""
    scores = scores_of(question, candidates, passages)
    about_document = bool(ASKS_ABOUT_DOCUMENT_RE.search(question))
    ranked = sorted(
        (
            i
            for i, c in enumerate(candidates)
            if scores[i] > 0 and quotable(c, about_document=about_document)
        ),
        key=lambda i: scores[i],
        reverse=True,
    )
    if not ranked:
        # No unit shares a word with the question: quote the best passage's opening.
        ranked = [i for i, c in enumerate(candidates) if c.passage == 0 and quotable(c)][:2]
        scores = [1.0] * len(candidates)
    chosen: set[int] = set()
    budget = CHARS_PER_SENTENCE * limit
    picked = 0
    picks: list[int] = []  # the units chosen for themselves, best first
    for index in ranked:
        if picked >= limit or scores[index] < RELATIVE_FLOOR * scores[ranked[0]]:
            break
        if index in chosen:
            continue
        picks.append(index)
        group = with_neighbours(candidates, index, follower=not picked and limit > 1)
        picked += 1 + sum(i not in chosen and follows(candidates, index, i) for i in group)
        chosen.update(group)
        if sum(shown_length(candidates[i].unit) for i in chosen) >= budget:
            break
    order = in_reading_order(candidates, passages, chosen, picks)
    return render(candidates, order, question_terms(question))
