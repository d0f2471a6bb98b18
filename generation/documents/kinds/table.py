"""A table of figures, dates and comparisons, each row citing its passage; shown as HTML
and downloadable as CSV."""

from __future__ import annotations

import csv
import io
import re
from typing import Any

from django.utils.translation import gettext as _

from generation.documents.markers import require_markers
from generation.documents.pieces import ONE_PASSAGE, Piece, cited, joined
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


def _rows(reply: dict[str, Any], number: int) -> dict[str, Any]:
    return {
        "rows": [
            {"cells": [row["what"], row["value"], row["detail"]], "source": cited("", number)}
            for row in reply["rows"]
        ]
    }


def _table(parts: list[dict[str, Any]], title: str) -> dict[str, Any]:
    return {
        "title": title,
        "columns": [_("What"), _("Figure or date"), _("Detail")],
        "rows": joined(parts, "rows")[: SCHEMA["properties"]["rows"]["maxItems"]],
    }


BY_PASSAGE = Piece(
    schema={
        "type": "object",
        "properties": {
            "rows": {
                "type": "array",
                "minItems": 1,
                "maxItems": ROWS_PER_PASSAGE,
                "items": {
                    "type": "object",
                    "properties": {
                        "what": {"type": "string", "minLength": 1, "maxLength": 80},
                        "value": {"type": "string", "minLength": 1, "maxLength": 40},
                        "detail": {"type": "string", "maxLength": 160},
                    },
                    "required": ["what", "value", "detail"],
                    "additionalProperties": False,
                },
            }
        },
        "required": ["rows"],
        "additionalProperties": False,
    },
    instructions=f"""You take the figures and dates out of one part of the user's documents \
for a table: 1 to {ROWS_PER_PASSAGE} rows.

- "what": what the figure or date is about (a few words).
- "value": the figure, quantity, version, size or date itself, exactly as written.
- "detail": a short note that makes the row clear (a unit, a condition), or "".
{ONE_PASSAGE}""",
    max_tokens=400,
    part=_rows,
    assemble=_table,
    title=lambda notebook: _("Table: %(notebook)s") % {"notebook": notebook},
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
