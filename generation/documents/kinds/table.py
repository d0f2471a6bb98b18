"""A table of figures, dates and comparisons, each row citing its passage; shown as HTML
and downloadable as CSV."""

from __future__ import annotations

import csv
import io
import re
from typing import Any

from django.utils.translation import gettext as _

from generation.documents.markers import require_markers
from generation.documents.pieces import ONE_PASSAGE, Piece, cited, heading_lines, joined
from generation.documents.structured import InvalidOutput
from notebooks.markers import strip_markers

FOCUS = "figures, dates, comparisons"
MAX_ROWS = 40

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "minLength": 1, "maxLength": 200},
        "columns": {
            "type": "array",
            "minItems": 1,
            "maxItems": 8,
            "items": {"type": "string", "minLength": 1},
        },
        "rows": {
            "type": "array",
            "minItems": 1,
            "maxItems": 60,
            "items": {
                "type": "object",
                "properties": {
                    "cells": {"type": "array", "items": {"type": "string"}},
                    "source": {"type": "string"},
                },
                "required": ["cells", "source"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["title", "columns", "rows"],
    "additionalProperties": False,
}

INSTRUCTIONS = """You make a table of the figures, dates and comparisons in the user's \
documents, using only the numbered passages you are given.

- Choose a few "columns" that suit the material (e.g. what, value, unit, date, compared with).
- Each row's "cells" has one string per column; its "source" is the [n] marker of the \
passage that states it (e.g. "[3]"). Never invent a marker; never cite the summaries."""


ROWS_PER_PASSAGE = 4
CELL_CHARS = 60  # a cell is a few words: one stopped here was copied text, cut off
NAME_WORDS = 6  # a row's first cell names its thing; a longer one was a sentence
# A row whose cells read on as one run of the passage's words this long is the passage's
# sentence cut into cells (the 1.5B model's favourite table), not facts set out.
COPIED_WORDS = 8
# A figure has a number of its own: a digit inside a name ("e2fsprogs") or a manual
# section ("debugfs(8)") is none.
FIGURE_RE = re.compile(r"(?<![\w(])\d")
WORD_RE = re.compile(r"[^\W\d_]{3,}")  # what a thing is takes a word, not only a count
FIGURE_WORDS = 4  # a figure or date is a few tokens; a longer one is a description
# A row's fields, in the columns' order: named, not a list, so a small model keeps them apart.
FIELDS = ("name", "what_it_is", "figure_or_date")


def _columns() -> list[str]:
    """A written-by-passage table's columns, in the document's language. Asked to choose
    columns for eight passages' openings, the 1.5B model named them "kind, description,
    example, example" or "part, fact, details" (docs/decisions.md); these suit the things
    any document names."""
    return [_("Name"), _("What it is"), _("Figure or date")]


def _row_problem(cells: list[str], passage: str) -> str:
    """What is wrong with a row of `cells` filled from `passage`; "" when nothing is."""
    name, what = cells[0].strip(), cells[1].strip()
    if not name:
        return "its first cell names nothing"
    if len(name.split()) > NAME_WORDS:
        return "its first cell is a sentence; give the thing's name in a few words"
    if not WORD_RE.search(what):
        return "it does not say in words what the thing is"
    if any(len(cell) >= CELL_CHARS for cell in cells):
        return "a cell is cut off; write a few words"
    run = " ".join(" ".join(cells).split()).lower()
    if len(run.split()) >= COPIED_WORDS and run in " ".join(passage.split()).lower():
        return "its cells are the text's sentence cut into pieces; set out the facts instead"
    return ""


def _own_rows(reply: dict[str, Any], passage: str) -> dict[str, Any]:
    """The reply's rows as cells, those that set facts out (a figure cell that holds no
    figure emptied), the others left out; InvalidOutput naming what was wrong when none
    is left. Rows named by two or more words of one heading line are the page's column
    headings, each made a "thing"."""
    names = [" ".join(row["name"].lower().split()) for row in reply["rows"]]
    headings = {
        name
        for header in heading_lines(passage)
        if len(header & set(names)) >= 2
        for name in header
    }
    rows, problems = [], []
    for row in reply["rows"]:
        cells = [" ".join(row[field].split()) for field in FIELDS]
        problem = (
            "it is a column heading of the text's table"
            if cells[0].lower() in headings
            else _row_problem(cells, passage)
        )
        if problem:
            problems.append(f"row {' | '.join(cells)[:80]!r}: {problem}")
            continue
        figure = cells[2]
        if not FIGURE_RE.search(figure) or len(figure.split()) > FIGURE_WORDS:
            figure = ""
        rows.append([*cells[:2], figure])
    if reply["rows"] and not rows:
        raise InvalidOutput("no row is usable; " + "; ".join(problems))
    return {"rows": rows}


BY_PASSAGE = Piece(
    schema={
        "type": "object",
        "properties": {
            "rows": {
                "type": "array",
                "minItems": 0,
                "maxItems": ROWS_PER_PASSAGE,
                "items": {
                    "type": "object",
                    "properties": {
                        field: {"type": "string", "maxLength": CELL_CHARS} for field in FIELDS
                    },
                    "required": list(FIELDS),
                    "additionalProperties": False,
                },
            }
        },
        "required": ["rows"],
        "additionalProperties": False,
    },
    instructions=f"""You set out, as rows of a table, the things one part of the user's \
documents names and describes: packages, commands, programs, people, places, events, \
settings. Each row is one such thing: "name", its name as the text writes it; \
"what_it_is", what it is or does, in a few words of your own; "figure_or_date", a figure \
or date the text gives for it, as written, or "" when it gives none. Write 0 to \
{ROWS_PER_PASSAGE} rows: none when the text names no such thing. Never copy a sentence \
into a row.
{ONE_PASSAGE}""",
    max_tokens=400,
    part=lambda reply, number: {
        "rows": [{"cells": cells, "source": cited("", number)} for cells in reply["rows"]]
    },
    assemble=lambda parts, title: {
        "title": title,
        "columns": _columns(),
        "rows": joined(parts, "rows")[: SCHEMA["properties"]["rows"]["maxItems"]],
    },
    title=lambda notebook: _("Table: %(notebook)s") % {"notebook": notebook},
    own_words=_own_rows,
)


def check(data: dict[str, Any], passages: int) -> None:
    width = len(data["columns"])
    for number, row in enumerate(data["rows"], start=1):
        if len(row["cells"]) != width:
            raise InvalidOutput(f"row {number} has {len(row['cells'])} cells for {width} columns")
        require_markers(row["source"], passages, what=f"row {number}")


def readable(data: dict[str, Any]) -> str:
    lines = [f"# {data['title']}", "", " | ".join(data["columns"])]
    lines += [" | ".join(row["cells"]) + f" {row['source']}" for row in data["rows"]]
    return "\n".join(lines)


def to_csv(data: dict[str, Any], citations: dict[int, str]) -> str:
    """The table as CSV, with a last column naming each row's sources (by `citations`:
    n → "title, page")."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow([*data["columns"], _("Source")])
    for row in data["rows"]:
        named = [f"[{n}] {citations[n]}" for n in _cited(row["source"]) if n in citations] or [
            strip_markers(row["source"])
        ]
        writer.writerow([*row["cells"], "; ".join(named)])
    return out.getvalue()


def _cited(text: str) -> list[int]:
    return [int(n) for n in re.findall(r"\[(\d+)\]", text)]
