"""Markdown tables in passages (a sheet's rows, a document's tables, as the loaders write
them: header rows, a | --- | line, then rows), read as a person reads them: each value with
its column's name ("Single 2000: 13.9%").

A small model reads the 6th value of a Markdown row under the 6th of 13 column names wrong,
and a row quoted alone is a line of numbers; named, both read right.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# The line under a Markdown table's header: | --- | --- |
_HEAD_RULE = re.compile(r"\|(?:\s*:?-{3,}:?\s*\|)+")


@dataclass(frozen=True)
class Table:
    """A Markdown table: its header's lines (through the | --- | line), its rows' lines, and
    where it stands in its text's lines (`first`, `last`)."""

    head: list[str]
    rows: list[str]
    first: int = 0
    last: int = 0

    def titles(self) -> list[str]:
        """The header's rows of one distinct filled cell: a title over the table."""
        return [next(filter(None, cells)) for cells in self._head_cells() if _is_title(cells)]

    def named_rows(self) -> list[str]:
        """Each row as its values, each after its column's name: its cells in the header's
        other rows, joined ("SINGLE 2000: 13.9%")."""
        columns: list[list[str]] = []
        for cells in self._head_cells():
            if _is_title(cells):
                continue
            for index, cell in enumerate(cells):
                while len(columns) <= index:
                    columns.append([])
                if cell and cell not in columns[index]:
                    columns[index].append(cell)
        names = [" ".join(parts) for parts in columns]
        named = []
        for row in self.rows:
            cells = _cells(row)
            if _is_note(cells):
                named.append(next(filter(None, cells)))
                continue
            named.append(
                "; ".join(
                    f"{names[index]}: {cell}" if index < len(names) and names[index] else cell
                    for index, cell in enumerate(cells)
                    if cell
                )
            )
        return named

    def _head_cells(self) -> list[list[str]]:
        return [_cells(line) for line in self.head[:-1]]


def _is_note(cells: list[str]) -> bool:
    """A note under the table in a row of its own: one text of words (a row whose values
    are all 0.0% is a row of figures)."""
    filled = set(filter(None, cells))
    return len(filled) == 1 and any(char.isalpha() for char in next(iter(filled)))


def _is_title(cells: list[str]) -> bool:
    """One text, in one cell or merged over a few of many (a title spelled in each cell it
    covers)."""
    filled = [cell for cell in cells if cell]
    return len(set(filled)) == 1 and (len(cells) == 1 or len(filled) < len(cells) - 1)


def _cells(line: str) -> list[str]:
    """The cells of a Markdown table's line ("| a | b |"), stripped."""
    inner = line.strip().removeprefix("|").removesuffix("|")
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", inner)]


def tables(text: str) -> list[Table]:
    """The Markdown tables of `text` that have a header and rows, in order."""
    lines = text.split("\n")
    found = []
    index = 0
    while index < len(lines):
        table = _table_at(lines, index)
        if table is None:
            index += 1
            continue
        if table.rows:
            found.append(table)
        index = table.last + 1
    return found


def table_around(text: str, position: int) -> Table | None:
    """The table (with a header and rows) whose line holds `position` in `text`; None when
    that line is in none."""
    index = text.count("\n", 0, position)
    return next((t for t in tables(text) if t.first <= index <= t.last), None)


def with_named_rows(text: str) -> str:
    """`text` with each table (with a header and rows) given as its named rows, each a
    paragraph of its own: what an extractive answer quotes a row from (its header and
    titles name things; they answer nothing)."""
    lines = text.split("\n")
    for table in reversed(tables(text)):
        lines[table.first : table.last + 1] = ["\n\n".join(table.named_rows())]
    return "\n".join(lines)


def _table_at(lines: list[str], index: int) -> Table | None:
    """The table whose first line is lines[index] (None when it is no table's): lines that
    begin with "|", a | --- | line among them."""
    if not _is_row(lines[index]) or (index > 0 and _is_row(lines[index - 1])):
        return None
    last = index
    while last + 1 < len(lines) and _is_row(lines[last + 1]):
        last += 1
    block = lines[index : last + 1]
    rule = next((n for n, line in enumerate(block) if _HEAD_RULE.fullmatch(line.strip())), None)
    if rule is None:
        return Table([], [], index, last)
    return Table(block[: rule + 1], block[rule + 1 :], index, last)


def _is_row(line: str) -> bool:
    return line.lstrip().startswith("|")
