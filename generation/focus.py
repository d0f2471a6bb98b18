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
from dataclasses import dataclass

from citations.verification import sentence_spans
from language.tokens import estimate_tokens
from language.words import terms


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
    wanted = set(terms(question))
    scores = [len(wanted & set(terms(text[start:end]))) for start, end in spans]
    best = max(range(len(spans)), key=lambda index: (scores[index], -index))
    table = table_around(text, spans[best][0])
    if table is not None:
        return table.excerpt(wanted, budget)
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


# The line under a Markdown table's header: | --- | --- |
_HEAD_RULE = re.compile(r"\|(?:\s*:?-{3,}:?\s*\|)+")


@dataclass(frozen=True)
class Table:
    """A Markdown table of a passage: its header (through the | --- | line) and its rows."""

    head: list[str]
    rows: list[str]

    def excerpt(self, wanted: set[str], budget: int) -> str:
        """The row sharing most of `wanted` (a question's terms), widened by a row at a time,
        after it first, while the excerpt fits `budget`; each row with its column's name at
        every value ("2000: 13.9%"), under the table's title. A small model reads the 6th
        value of a Markdown row under the 6th of 13 column names wrong; named, it does not.
        The best row comes whatever its size."""
        titles, names = self._titles_and_names()
        rows = [self._named(row, names) for row in self.rows]
        room = budget - estimate_tokens("\n".join(titles))
        scores = [len(wanted & set(terms(row))) for row in self.rows]
        best = max(range(len(rows)), key=lambda index: (scores[index], -index))
        first, last = widened(
            best,
            len(rows),
            lambda low, high: estimate_tokens("\n".join(rows[low : high + 1])) <= room,
        )
        return "\n".join([*titles, *rows[first : last + 1]])

    def _titles_and_names(self) -> tuple[list[str], list[str]]:
        """The header's rows of one filled cell (a title over the table), and each column's
        name: its cells in the other header rows, joined ("SINGLE 2000")."""
        titles: list[str] = []
        columns: list[list[str]] = []
        for line in self.head[:-1]:
            cells = _cells(line)
            filled = [cell for cell in cells if cell]
            if len(set(filled)) == 1 and (len(cells) == 1 or len(filled) < len(cells) - 1):
                titles.append(filled[0])  # a title, in one cell or merged over several
                continue
            for index, cell in enumerate(cells):
                while len(columns) <= index:
                    columns.append([])
                if cell and cell not in columns[index]:
                    columns[index].append(cell)
        return titles, [" ".join(parts) for parts in columns]

    @staticmethod
    def _named(row: str, names: list[str]) -> str:
        cells = _cells(row)
        named = [
            f"{names[index]}: {cell}" if index < len(names) and names[index] else cell
            for index, cell in enumerate(cells)
            if cell
        ]
        return "; ".join(named)


def _cells(line: str) -> list[str]:
    """The cells of a Markdown table's line ("| a | b |"), stripped."""
    inner = line.strip().removeprefix("|").removesuffix("|")
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", inner)]


def table_around(text: str, position: int) -> Table | None:
    """The Markdown table whose line holds `position` in `text`, when it has a header and
    rows; None elsewhere."""
    lines = text.split("\n")
    index = text.count("\n", 0, position)
    if not _is_row(lines[index]):
        return None
    top = bottom = index
    while top > 0 and _is_row(lines[top - 1]):
        top -= 1
    while bottom + 1 < len(lines) and _is_row(lines[bottom + 1]):
        bottom += 1
    table = lines[top : bottom + 1]
    rule = next((n for n, line in enumerate(table) if _HEAD_RULE.fullmatch(line.strip())), None)
    if rule is None or rule == len(table) - 1:
        return None
    return Table(table[: rule + 1], table[rule + 1 :])


def _is_row(line: str) -> bool:
    return line.lstrip().startswith("|")
