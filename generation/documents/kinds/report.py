"""A report: structured Markdown in which every claim cites its passage with [n]."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from generation.documents.definitions import definition_of
from generation.documents.inputs import Inputs
from generation.documents.markers import require_markers
from generation.documents.pieces import ONE_PASSAGE, Piece, cited, without_table_lines
from generation.documents.reading import central, cite, parts, read_sentences, source_chunks
from language.sentences import stands_alone

FOCUS = "main findings, conclusions, key facts and arguments"
SENTENCES_PER_PART = 3
SENTENCES_OVERVIEW = 2  # from the text before the first chapter (a preface, an abstract)
COVERS_SECTIONS = 8
# The most a model's report may run to: about 750 words, the top of the 400-700 the
# instructions ask for. A small model asked for a length still runs on; with a grammar
# (the local model) it is stopped here, and acceptance drops the sentence it was in. An
# extractive report (every chapter of a long manual) has no such bound.
MARKDOWN_CHARS = 4500

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "minLength": 1, "maxLength": 200},
        "markdown": {"type": "string", "minLength": 1},
    },
    "required": ["title", "markdown"],
    "additionalProperties": False,
}

WRITTEN_SCHEMA: dict[str, Any] = {
    **SCHEMA,
    "properties": {
        **SCHEMA["properties"],
        "markdown": {"type": "string", "minLength": 1, "maxLength": MARKDOWN_CHARS},
    },
}

INSTRUCTIONS = """You write a report from the user's documents, using only the numbered \
passages and the document summaries you are given.

- Structure it in Markdown: a short overview, then 3 to 6 sections with "##" headings, lists \
where they help, and a conclusion. About 400 to 700 words in all: say each fact once.
- Put a marker like [1] after every claim, naming the passage it comes from; cite several \
as [1][3]. Summaries are context only: never cite them, and never invent a marker.
- Use only facts stated in the material. No outside knowledge."""


def _section(reply: dict[str, Any], number: int) -> dict[str, Any]:
    said = " ".join(cited(_ended(sentence), number) for sentence in reply["sentences"])
    return {"markdown": f"## {reply['heading'].strip()}\n\n{said}"}


def _ended(sentence: str) -> str:
    """The sentence with a full stop when the model left it without one."""
    sentence = sentence.strip()
    return sentence + "." if sentence[-1:].isalnum() else sentence


def _assembled(parts: list[dict[str, Any]], title: str) -> dict[str, Any]:
    """The sections in the documents' order; two passages that gave one heading become one
    section."""
    sections: dict[str, list[str]] = {}
    for part in parts:
        heading, _blank, said = part["markdown"].partition("\n\n")
        sections.setdefault(heading.lower(), [heading]).append(said)
    markdown = "\n\n".join(f"{said[0]}\n\n{' '.join(said[1:])}" for said in sections.values())
    return {"title": title, "markdown": markdown}


BY_PASSAGE = Piece(
    schema={
        "type": "object",
        "properties": {
            "heading": {"type": "string", "minLength": 1, "maxLength": 80},
            "sentences": {
                "type": "array",
                "minItems": 1,
                "maxItems": 4,
                "items": {"type": "string", "minLength": 1, "maxLength": 300},
            },
        },
        "required": ["heading", "sentences"],
        "additionalProperties": False,
    },
    instructions=f"""You write one section of a report from one part of the user's documents.

- "heading": a short title naming its topic (a few words, no "#").
- "sentences": 2 to 4 sentences that state its key facts in plain prose, each fact once; \
name commands, figures and names exactly as the document does.
{ONE_PASSAGE}""",
    max_tokens=500,
    part=_section,
    assemble=_assembled,
    title=lambda notebook: _("Report: %(notebook)s") % {"notebook": notebook},
    own_words=without_table_lines("sentences"),
)


def check(data: dict[str, Any], passages: int) -> None:
    require_markers(data["markdown"], passages, what="the report")


def extractive(inputs: Inputs, *, notebook_title: str) -> dict[str, Any]:
    """Per source, per major section (chapter): what it covers (its sections), then its
    key sentences, each cited; the text before the first chapter gives the overview."""
    lines: list[str] = []
    for source in inputs.sources:
        sentences = read_sentences(source_chunks(source))
        sections = parts(sentences)
        among = [
            [s for s in part.sentences if stands_alone(s.text, s.language)] for part in sections
        ]
        body: list[str] = []
        for part, candidates in zip(sections, among, strict=True):
            if part.is_front_matter:  # only what it defines says what the source is about
                defining = [s for s in candidates if definition_of(s)]
                chosen = central(defining, among=among, limit=SENTENCES_OVERVIEW)
            else:
                chosen = central(candidates, among=among, limit=SENTENCES_PER_PART)
            if not chosen and not part.sections:
                continue
            if part.title:
                body += ["", f"### {part.title}", ""]
            if part.sections:
                body.append(_covers(part.sections) + "\n")
            body += [f"- {sentence.text} {cite(inputs, sentence.chunk)}" for sentence in chosen]
        if body:
            titled = [s for s in sections if s.title]
            lines += [f"## {source.title}", ""]
            if len(titled) > 1:
                lines.append(
                    ngettext(
                        "%(count)s part: %(titles)s.",
                        "%(count)s parts: %(titles)s.",
                        len(titled),
                    )
                    % {"count": len(titled), "titles": ", ".join(p.title for p in titled)}
                )
            lines += [*body, ""]
    return {
        "title": _("Report: %(notebook)s") % {"notebook": notebook_title},
        "markdown": "\n".join(lines).strip(),
    }


def _covers(sections: list[str]) -> str:
    shown = sections[:COVERS_SECTIONS]
    more = len(sections) - len(shown)
    listed = ", ".join(shown) + (" " + _("and %(count)s more") % {"count": more} if more else "")
    return "*" + _("Covers: %(sections)s.") % {"sections": listed} + "*"


def readable(data: dict[str, Any]) -> str:
    return f"# {data['title']}\n\n{data['markdown']}"
