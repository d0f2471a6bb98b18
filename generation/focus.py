"""The part of a passage a small model needs: the sentence that best matches the question,
with the sentences around it, within a token budget (CHAT_PASSAGE_TOKENS).

A 420-token window holds the answer in a sentence or two; eight whole windows are a
3,500-token prompt that a 2-core CPU reads in about a minute before the first word, and in
which a 1.5B model loses the question. The excerpt is cut verbatim from the chunk, so the
citation still opens, quotes and checks the whole chunk.
"""

from __future__ import annotations

import re

from citations.verification import sentence_spans
from language.tokens import estimate_tokens
from language.words import terms


def focused(text: str, question: str, budget: int) -> str:
    """`text` itself when it fits `budget` tokens (or the budget is 0); else its sentence
    sharing most of the question's words, widened by a neighbour at a time, after it first,
    while the excerpt fits."""
    if budget <= 0 or estimate_tokens(text) <= budget:
        return text
    # Sentences, and the lines of a sentence that runs over several (a table, a list).
    spans = [
        (start + line.start(), start + line.end())
        for start, end in sentence_spans(text)
        for line in re.finditer(r"[^\n]*\S[^\n]*", text[start:end])
    ]
    if len(spans) < 2:
        return text
    wanted = set(terms(question))
    scores = [len(wanted & set(terms(text[start:end]))) for start, end in spans]
    best = max(range(len(spans)), key=lambda index: (scores[index], -index))
    first = last = best
    while True:
        widened = False
        for candidate in (last + 1, first - 1):
            if not 0 <= candidate < len(spans):
                continue
            low, high = min(first, candidate), max(last, candidate)
            if estimate_tokens(text[spans[low][0] : spans[high][1]]) > budget:
                continue
            first, last, widened = low, high, True
        if not widened:
            break
    excerpt = text[spans[first][0] : spans[last][1]]
    return ("… " if first else "") + excerpt + (" …" if last < len(spans) - 1 else "")
