"""A table of figures, dates and comparisons, each row citing its passage; shown as HTML
and downloadable as CSV."""

from __future__ import annotations

import csv
import io
import re
from typing import Any

from django.utils.translation import gettext as _

from generation.documents.markers import require_markers
from generation.documents.pieces import ONE_PASSAGE, First, Piece, cited, joined
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


ROWS_PER_PASSAGE = 3
CELL_CHARS = 60  # a cell is a few words: one stopped here was copied text, cut off
MIN_COLUMNS, MAX_COLUMNS = 2, 4


def _columns(reply: dict[str, Any]) -> Piece:
    """The rows to ask of each passage, under the columns the first call chose."""
    columns = [" ".join(column.split()) for column in reply["columns"]]
    if len({column.lower() for column in columns}) < len(columns):
        raise InvalidOutput("two columns have the same name; name each column once")
    if any("_" in column for column in columns):
        raise InvalidOutput("a column is named like a variable; name it in plain words")
    row = {
        "type": "array",
        "minItems": len(columns),
        "maxItems": len(columns),
        "items": {"type": "string", "maxLength": CELL_CHARS},
    }
    named = "; ".join(f"{index}. {column}" for index, column in enumerate(columns, start=1))
    return Piece(
        schema={
            "type": "object",
            "properties": {
                "rows": {"type": "array", "minItems": 1, "maxItems": ROWS_PER_PASSAGE, "items": row}
            },
            "required": ["rows"],
            "additionalProperties": False,
        },
        instructions=f"""You fill rows of a table from one part of the user's documents: 1 to \
{ROWS_PER_PASSAGE} rows, each a list of {len(columns)} cells in this order: {named}. A cell \
is a few words or a figure as the text writes it; "" where the text says nothing for it.
{ONE_PASSAGE}""",
        max_tokens=400,
        part=lambda reply, number: {
            "rows": [
                {"cells": cells, "source": cited("", number)}
                for cells in reply["rows"]
                if all(len(cell) < CELL_CHARS for cell in cells)
            ]
        },
        assemble=lambda parts, title: {
            "title": title,
            "columns": columns,
            "rows": joined(parts, "rows")[: SCHEMA["properties"]["rows"]["maxItems"]],
        },
        title=lambda notebook: notebook,
    )


# The title, then the first call: the piece asked of each passage comes from its reply.
BY_PASSAGE = Piece(
    schema={},
    instructions="",
    max_tokens=0,
    part=lambda reply, number: reply,
    assemble=lambda parts, title: {},
    title=lambda notebook: _("Table: %(notebook)s") % {"notebook": notebook},
    first=First(
        schema={
            "type": "object",
            "properties": {
                "columns": {
                    "type": "array",
                    "minItems": MIN_COLUMNS,
                    "maxItems": MAX_COLUMNS,
                    "items": {"type": "string", "minLength": 1, "maxLength": 40},
                }
            },
            "required": ["columns"],
            "additionalProperties": False,
        },
        instructions=f"""You plan a table of the facts in the user's documents. You are \
given the opening of each part the table will be filled from. Choose {MIN_COLUMNS} to \
{MAX_COLUMNS} "columns" that every part can fill with a few words or a figure each: the \
first names the thing a row is about (a package, a command, a setting, a date, a place), \
the others what the documents say about it. Name them in plain words a reader understands, \
no [n] markers.""",
        then=_columns,
    ),
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
