"""A document's blocks (headings, paragraphs, tables) in reading order, made passages.

Every loader of a structured format (Word, OpenDocument, EPUB, slides, spreadsheets) walks
its file and hands the blocks it finds to a `DocumentText`, which keeps the section path that
headings open and turns tables into Markdown rows. A table is cut into passages of whole
rows, each small enough to be one chunk and each beginning with the table's header rows, so
that a chunk holding "| Dublin | 1 173 179 |" also says which columns those are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ingest.chunker import TOKEN_RE
from ingest.passages import Passage
from ingest.structure import SectionStart, label, starts_from_headings

# Below the chunker's window (420), with room for a long header row: a block is one chunk.
TABLE_BLOCK_TOKENS = 360
MAX_TABLE_COLUMNS = 64
MAX_HEADER_ROWS = 3


def _tokens(text: str) -> int:
    return sum(1 for _ in TOKEN_RE.finditer(text))


def clean(text: str) -> str:
    """A block's text on one line: runs of spaces collapsed, no control characters."""
    return " ".join(text.replace("\x00", "").split())


def markdown_row(cells: Sequence[str]) -> str:
    values = [clean(cell) for cell in cells]
    filled = {value for value in values if value}
    # A row that is one merged cell spanning the columns (a title, a note) is said once.
    if len(filled) == 1 and len(values) > 1 and sum(1 for value in values if value) > 1:
        values = [next(iter(filled))]
    return "| " + " | ".join(values) + " |"


def table_rows(rows: Sequence[Sequence[str]]) -> list[list[str]]:
    """Rows without the columns that are empty in every row, without empty rows, all of
    one width."""
    filled = [list(row[:MAX_TABLE_COLUMNS]) for row in rows if any(clean(c) for c in row)]
    if not filled:
        return []
    width = max(len(row) for row in filled)
    even = [row + [""] * (width - len(row)) for row in filled]
    kept = [column for column in range(width) if any(clean(row[column]) for row in even)]
    return [[row[column] for column in kept] for row in even]


@dataclass
class TableBlock:
    """Rows of a table that go into one passage, with the first and last row numbers."""

    text: str
    first: int
    last: int


def _is_number(cell: str) -> bool:
    """A cell that holds a figure, an amount of money too ($2,336, 12 €); a year
    (1800-2100) reads as a column's label."""
    try:
        value = float(cell.replace(",", "").rstrip("%").strip("$€£¥ "))
    except ValueError:
        return False
    return not (value.is_integer() and 1800 <= value <= 2100)


def header_rows(rows: Sequence[Sequence[str]]) -> int:
    """How many rows head a table: those before its first row of figures (a title row and
    two of labels, at most), else the first row alone."""
    for index, row in enumerate(rows[: MAX_HEADER_ROWS + 1]):
        if _is_figure_row(row):
            return index if 1 <= index <= MAX_HEADER_ROWS and len(rows) > 2 * index else 1
    return 1


def _is_figure_row(row: Sequence[str]) -> bool:
    filled = [clean(cell) for cell in row if clean(cell)]
    return bool(filled) and sum(_is_number(cell) for cell in filled) * 2 > len(filled)


def _is_label_row(row: Sequence[str], width: int) -> bool:
    """A row that could head columns: across half the table or more, not one figure."""
    filled = [clean(cell) for cell in row if clean(cell)]
    return len(filled) * 2 >= width and not any(_is_number(cell) for cell in filled)


def _subheader(rows: Sequence[Sequence[str]], at: int, width: int) -> int:
    """How many rows from `at` head a table stacked under the one before (a sheet's
    "SINGLE" rates, then its "MARRIED" rates, each under rows of its own labels): rows
    of labels followed by a row of figures; 0 when the rows at `at` are no such head."""
    count = 0
    while at + count < len(rows) and count < MAX_HEADER_ROWS:
        if not _is_label_row(rows[at + count], width):
            break
        count += 1
    if count and at + count < len(rows) and _is_figure_row(rows[at + count]):
        return count
    return 0


def table_blocks(
    rows: Sequence[Sequence[str]], numbers: Sequence[int] | None = None
) -> list[TableBlock]:
    """A table as Markdown blocks of whole rows, its header rows atop each. `numbers` are
    the rows' own numbers (a sheet's row numbers), 1.. by default.

    A table of figures can stack tables under one another, each under labels of its own;
    those rows head the blocks after them, in place of as many of the header's last rows
    (the table's title row stays), and a block never holds rows of two of them."""
    numbers = list(numbers) if numbers is not None else list(range(1, len(rows) + 1))
    if not rows:
        return []
    width = max(len(row) for row in rows)
    heading = header_rows(rows)
    head_rows = [markdown_row(row) for row in rows[:heading]]
    head = "\n".join(head_rows)
    if len(rows) == heading:
        return [TableBlock(head, numbers[0], numbers[-1])]
    rule = f"\n|{' --- |' * width}" if width > 1 else ""
    stacked = any(_is_figure_row(row) for row in rows[heading:])
    blocks: list[TableBlock] = []
    lines: list[str] = []
    first = numbers[0]
    last = numbers[heading]
    head_tokens = _tokens(head + rule)
    used = head_tokens
    index = heading
    while index < len(rows):
        subheader = _subheader(rows, index, width) if stacked and lines else 0
        if subheader:
            blocks.append(TableBlock("\n".join([head + rule, *lines]), first, last))
            labels = [markdown_row(row) for row in rows[index : index + subheader]]
            kept = head_rows[: -len(labels)] if len(labels) < len(head_rows) else []
            head_rows = kept + labels
            head = "\n".join(head_rows)
            head_tokens = _tokens(head + rule)
            lines, used, first = [], head_tokens, numbers[index]
            index += subheader
            continue
        line = markdown_row(rows[index])
        cost = _tokens(line)
        if lines and used + cost > TABLE_BLOCK_TOKENS:
            blocks.append(TableBlock("\n".join([head + rule, *lines]), first, last))
            lines, used, first = [], head_tokens, numbers[index]
        lines.append(line)
        used += cost
        last = numbers[index]
        index += 1
    blocks.append(TableBlock("\n".join([head + rule, *lines]), first, last))
    return blocks


@dataclass
class DocumentText:
    """Collects blocks into passages; `page` and `page_label` mark the passages made next
    (a slide, a sheet)."""

    passages: list[Passage] = field(default_factory=list)
    page: int | None = None
    page_label: str = ""
    path: tuple[str, ...] = ()
    _parts: list[str] = field(default_factory=list)
    _length: int = 0
    _headings: list[tuple[int, int, str]] = field(default_factory=list)

    def heading(self, level: int, text: str) -> None:
        title = label(clean(text))
        if not title:
            return
        offset = self._length + (2 if self._parts else 0)
        self._headings.append((offset, max(level, 0), title))
        self._add(title)

    def paragraph(self, text: str) -> None:
        """A paragraph; its line breaks are kept (a poem's lines, an address)."""
        lines = [clean(line) for line in text.split("\n")]
        text = "\n".join(line for line in lines if line)
        if text:
            self._add(text)

    def _add(self, text: str) -> None:
        if self._parts:
            self._length += 2
        self._parts.append(text)
        self._length += len(text)

    def table(self, rows: Sequence[Sequence[str]]) -> None:
        """A table in passages of its own, unless it is one row or one column (a layout
        table, a boxed note): then its cells are paragraphs."""
        rows = table_rows(rows)
        if not rows:
            return
        if len(rows) == 1 or max(len(row) for row in rows) == 1:
            for row in rows:
                self.paragraph(" | ".join(clean(cell) for cell in row if clean(cell)))
            return
        self.end_passage()
        for block in table_blocks(rows):
            self._passage(block.text, ())
        self.end_passage()

    def table_passages(self, blocks: Sequence[TableBlock], *, label_for: str) -> None:
        """A sheet's blocks, each its own passage labelled with its rows."""
        self.end_passage()
        for block in blocks:
            rows = f"{block.first}" if block.first == block.last else f"{block.first}–{block.last}"
            self.page_label = label_for % {"rows": rows}
            self._passage(block.text, ())

    def _passage(self, text: str, headings: Sequence[tuple[int, int, str]]) -> None:
        sections, self.path = starts_from_headings(headings, carried=self.path)
        self.passages.append(
            Passage(text=text, page=self.page, page_label=self.page_label, sections=sections)
        )

    def end_passage(self) -> None:
        """What was collected becomes a passage; the next blocks start another (a new slide,
        or a table that needs passages of its own)."""
        if self._parts:
            self._passage("\n\n".join(self._parts), self._headings)
        self._parts, self._length, self._headings = [], 0, []

    def set_path(self, path: tuple[str, ...]) -> None:
        """Start the next passage in this section, whatever the headings before said (a
        slide's title, a sheet's name)."""
        self.end_passage()
        self.path = path

    def finish(self) -> list[Passage]:
        self.end_passage()
        return [passage for passage in self.passages if passage.text.strip()]


def section_start(path: tuple[str, ...]) -> tuple[SectionStart, ...]:
    return (SectionStart(0, path),) if path else ()
