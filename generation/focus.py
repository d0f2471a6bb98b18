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
    # A table's row means nothing without its column names: the header goes first.
    head = table_head(text, spans, best)
    head_text = ""
    if head is not None and best > head[1]:
        head_text = text[spans[head[0]][0] : spans[head[1]][1]] + "\n"
        if estimate_tokens(head_text) > budget // 2:  # a very wide table: its rows alone
            head_text = ""
        budget -= estimate_tokens(head_text)
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
    if head is not None and head_text and first <= head[1] + 1:
        first, head_text = head[0], ""
    excerpt = text[spans[first][0] : spans[last][1]]
    opening = head_text or ("… " if first else "")
    return opening + excerpt + (" …" if last < len(spans) - 1 else "")


# The line under a Markdown table's header: | --- | --- |
_HEAD_RULE = re.compile(r"\|(?:\s*:?-{3,}:?\s*\|)+")


def table_head(text: str, spans: list[tuple[int, int]], row: int) -> tuple[int, int] | None:
    """The first and last spans of the header (through its | --- | line) of the Markdown
    table that span `row` is a line of, or None when it is not in one."""

    def in_table(index: int) -> bool:
        line_start = text.rfind("\n", 0, spans[index][0]) + 1
        return text[line_start:].startswith("|")

    if not in_table(row):
        return None
    top = row
    while top > 0 and in_table(top - 1):
        top -= 1
    for index in range(top, row + 1):
        if _HEAD_RULE.fullmatch(text[spans[index][0] : spans[index][1]].strip()):
            return top, index
    return None
