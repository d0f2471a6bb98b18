"""A report: structured Markdown in which every claim cites its passage with [n]."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _

from generation.documents.extract import key_sentences, source_sentences
from generation.documents.inputs import Inputs
from generation.documents.markers import require_markers

FOCUS = "main findings, conclusions, key facts and arguments"
SENTENCES_PER_SOURCE = 5

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "minLength": 1, "maxLength": 200},
        "markdown": {"type": "string", "minLength": 1},
    },
    "required": ["title", "markdown"],
    "additionalProperties": False,
}

INSTRUCTIONS = """You write a report from the user's documents, using only the numbered \
passages and the document summaries you are given.

- Structure it in Markdown: a short overview, then sections with "##" headings, lists where \
they help, and a conclusion.
- Put a marker like [1] after every claim, naming the passage it comes from; cite several \
as [1][3]. Summaries are context only: never cite them, and never invent a marker.
- Use only facts stated in the material. No outside knowledge."""


def check(data: dict[str, Any], passages: int) -> None:
    require_markers(data["markdown"], passages, what="the report")


def extractive(inputs: Inputs, *, notebook_title: str) -> dict[str, Any]:
    lines: list[str] = []
    for source in inputs.sources:
        quotes = key_sentences(source_sentences(inputs, source), SENTENCES_PER_SOURCE)
        if not quotes:
            continue
        lines.append(f"## {source.title}")
        lines.append("")
        lines += [f"- {quote.text} [{quote.passage}]" for quote in quotes]
        lines.append("")
    return {
        "title": _("Key points: %(notebook)s") % {"notebook": notebook_title},
        "markdown": "\n".join(lines).strip(),
    }


def readable(data: dict[str, Any]) -> str:
    return f"# {data['title']}\n\n{data['markdown']}"
