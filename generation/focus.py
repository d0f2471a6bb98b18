"""The part of a passage a small model needs: the sentence that best matches the question,
with the sentences around it, within a token budget (CHAT_PASSAGE_TOKENS); a table's row
comes under the table's header.

A 420-token window holds the answer in a sentence or two; eight whole windows are a
3,500-token prompt that a 2-core CPU reads in about a minute before the first word, and in
which a 1.5B model loses the question. The excerpt is cut verbatim from the chunk, so the
citation still opens, quotes and checks the whole chunk.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from citations.verification import sentence_spans
from generation.tables import Table, table_around
from language.tokens import estimate_tokens
from language.words import terms_and_digits


def focused(text: str, question: str, budget: int) -> str:
    """`text` itself when it fits `budget` tokens (or the budget is 0); else its sentence
    sharing most of the question's words, widened by a neighbour at a time, after it first,
    while the excerpt fits. In a table, its rows are given under its header."""
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
    wanted = set(terms_and_digits(question))
    scores = [len(wanted & set(terms_and_digits(text[start:end]))) for start, end in spans]
    best = max(range(len(spans)), key=lambda index: (scores[index], -index))
    table = table_around(text, spans[best][0])
    if table is not None:
        return table_excerpt(table, wanted, budget)
    first, last = widened(
        best,
        len(spans),
        lambda low, high: estimate_tokens(text[spans[low][0] : spans[high][1]]) <= budget,
    )
    excerpt = text[spans[first][0] : spans[last][1]]
    return ("… " if first else "") + excerpt + (" …" if last < len(spans) - 1 else "")


def widened(best: int, count: int, fits: Callable[[int, int], bool]) -> tuple[int, int]:
    """The first and last of `count` pieces around piece `best`, widened by a neighbour at a
    time, the one after first, while `fits(first, last)`."""
    first = last = best
    while True:
        grew = False
        for candidate in (last + 1, first - 1):
            if not 0 <= candidate < count:
                continue
            low, high = min(first, candidate), max(last, candidate)
            if fits(low, high):
                first, last, grew = low, high, True
        if not grew:
            return first, last


def table_excerpt(table: Table, wanted: set[str], budget: int) -> str:
    """The table's row sharing most of `wanted` (a question's terms), widened by a row at a
    time, after it first, while the excerpt fits `budget`: each row named (tables.py), under
    the table's titles. The best row comes whatever its size."""
    titles, rows = table.titles(), table.named_rows()
    room = budget - estimate_tokens("\n".join(titles))
    scores = [len(wanted & set(terms_and_digits(row))) for row in table.rows]
    best = max(range(len(rows)), key=lambda index: (scores[index], -index))
    first, last = widened(
        best,
        len(rows),
        lambda low, high: estimate_tokens("\n".join(rows[low : high + 1])) <= room,
    )
    return "\n".join([*titles, *rows[first : last + 1]])
