"""An infographic: key figures, a timeline and comparisons, laid out as SVG from the data
(generation/documents/svg.py), each item citing its passage."""

from __future__ import annotations

import re
from typing import Any

from django.utils.translation import gettext as _

from generation.documents.markers import require_markers
from generation.documents.pieces import ONE_PASSAGE, Piece, cited, joined
from generation.documents.structured import InvalidOutput

FOCUS = "key figures, statistics, dates, milestones and comparisons"
MAX_FIGURES = 6
MAX_EVENTS = 8
MAX_LABEL_CHARS, MAX_EVENT_CHARS = 160, 200  # as the schema allows

_CITED = {"type": "string"}
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "minLength": 1, "maxLength": 200},
        "figures": {
            "type": "array",
            "maxItems": 8,
            "items": {
                "type": "object",
                "properties": {
                    "value": {"type": "string", "minLength": 1, "maxLength": 40},
                    "label": {"type": "string", "minLength": 1, "maxLength": MAX_LABEL_CHARS},
                    "source": _CITED,
                },
                "required": ["value", "label", "source"],
                "additionalProperties": False,
            },
        },
        "timeline": {
            "type": "array",
            "maxItems": 12,
            "items": {
                "type": "object",
                "properties": {
                    "date": {"type": "string", "minLength": 1, "maxLength": 40},
                    "event": {"type": "string", "minLength": 1, "maxLength": MAX_EVENT_CHARS},
                    "source": _CITED,
                },
                "required": ["date", "event", "source"],
                "additionalProperties": False,
            },
        },
        "comparisons": {
            "type": "array",
            "maxItems": 4,
            "items": {
                "type": "object",
                "properties": {
                    "title": {"type": "string", "minLength": 1, "maxLength": 160},
                    "unit": {"type": "string", "maxLength": 30},
                    "source": _CITED,
                    "items": {
                        "type": "array",
                        "minItems": 2,
                        "maxItems": 8,
                        "items": {
                            "type": "object",
                            "properties": {
                                "label": {"type": "string", "minLength": 1, "maxLength": 80},
                                "value": {"type": "number"},
                            },
                            "required": ["label", "value"],
                            "additionalProperties": False,
                        },
                    },
                },
                "required": ["title", "items", "source"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["title", "figures", "timeline", "comparisons"],
    "additionalProperties": False,
}

INSTRUCTIONS = f"""You make the data of an infographic from the user's documents, using only \
the numbered passages you are given: up to {MAX_FIGURES} key "figures" (a short value like \
"42 %" and what it measures), a "timeline" of dated events in order, and "comparisons" \
(quantities of the same unit side by side, as numbers). Leave a list empty when the \
material has nothing for it. Every "source" is the [n] marker of the passage that states \
it (e.g. "[2]"). Never invent a figure or a marker; never cite the summaries."""


# A figure is a number said of something named; a timeline's date holds a year.
FIGURE_RE = re.compile(r"\d")
NAMED_RE = re.compile(r"[^\W\d_]{3,}")
YEAR_RE = re.compile(r"(?<!\d)\d{3,4}(?!\d)")


def _items(reply: dict[str, Any], number: int) -> dict[str, Any]:
    """The figures and dated events, cited; a "figure" without a number or whose label
    names nothing ("V:124"), or a "date" without a year ("7.5.1 Basic fonts"), is no item."""
    marker = cited("", number)
    figures = [
        {**figure, "source": marker}
        for figure in reply["figures"]
        if FIGURE_RE.search(figure["value"]) and NAMED_RE.search(figure["label"])
    ]
    events = [
        {**event, "source": marker}
        for event in reply["timeline"]
        if YEAR_RE.search(event["date"]) and NAMED_RE.search(event["event"])
    ]
    return {"figures": figures, "timeline": events}


def _infographic(parts: list[dict[str, Any]], title: str) -> dict[str, Any]:
    properties = SCHEMA["properties"]
    return {
        "title": title,
        "figures": joined(parts, "figures")[: properties["figures"]["maxItems"]],
        "timeline": joined(parts, "timeline")[: properties["timeline"]["maxItems"]],
        "comparisons": [],
    }


def _listed(name: str, most: int) -> dict[str, Any]:
    item = SCHEMA["properties"][name]["items"]
    fields = {key: value for key, value in item["properties"].items() if key != "source"}
    return {
        "type": "array",
        "maxItems": most,
        "items": {**item, "properties": fields, "required": list(fields)},
    }


BY_PASSAGE = Piece(
    schema={
        "type": "object",
        "properties": {"figures": _listed("figures", 2), "timeline": _listed("timeline", 2)},
        "required": ["figures", "timeline"],
        "additionalProperties": False,
    },
    instructions=f"""You take what an infographic would show out of one part of the user's \
documents: up to 2 key "figures" (a short "value" such as "42 %", "67,672" or "8 TiB", and a \
"label" saying what it measures) and up to 2 dated events for a "timeline" (a "date" and the \
"event"). Leave a list empty when the part has nothing for it; never make a figure up.
{ONE_PASSAGE}""",
    max_tokens=300,
    part=_items,
    assemble=_infographic,
    title=lambda notebook: _("In figures: %(notebook)s") % {"notebook": notebook},
)


def check(data: dict[str, Any], passages: int) -> None:
    items = data["figures"] + data["timeline"] + data["comparisons"]
    if not items:
        raise InvalidOutput("the infographic is empty: give at least one figure or event")
    for number, item in enumerate(items, start=1):
        require_markers(item["source"], passages, what=f"item {number}")


def readable(data: dict[str, Any]) -> str:
    lines = [f"# {data['title']}", ""]
    lines += [f"- {f['value']}: {f['label']} {f['source']}" for f in data["figures"]]
    lines += [f"- {e['date']}: {e['event']} {e['source']}" for e in data["timeline"]]
    for comparison in data["comparisons"]:
        unit = comparison.get("unit", "")
        values = ", ".join(
            f"{i['label']} {i['value']:g} {unit}".strip() for i in comparison["items"]
        )
        lines.append(f"- {comparison['title']}: {values} {comparison['source']}")
    return "\n".join(lines)
