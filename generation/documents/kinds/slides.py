"""A slide deck: a title, then 6 to 15 slides, each a heading, 3 to 5 bullets that cite their
passages with [n], and speaker notes. Shown in the page one slide at a time, exported as PPTX
and PDF (generation/documents/decks.py), a slide revised alone (revise_slide)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.utils.translation import gettext as _

from generation.documents.inputs import Inputs
from generation.documents.markers import require_markers
from generation.documents.pieces import (
    COPIED_RE,
    ONE_PASSAGE,
    Piece,
    cited,
    joined,
    without_table_lines,
)
from generation.documents.reading import (
    Sentence,
    central,
    cite,
    clipped,
    parts,
    read_sentences,
    source_chunks,
)
from generation.documents.structured import InvalidOutput
from language.sentences import stands_alone

FOCUS = "main topics, key facts, figures and conclusions to present"
MIN_SLIDES, MAX_SLIDES = 6, 15
MIN_BULLETS, MAX_BULLETS = 3, 5
BULLET_CHARS = 300  # a bullet is a line, not a paragraph
# Offline: bullets per slide, and the longest sentence that still reads as a bullet.
EXTRACTIVE_BULLETS = 4
EXTRACTIVE_BULLET_WORDS = 40


def slide_schema(min_bullets: int = MIN_BULLETS) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "heading": {"type": "string", "minLength": 1, "maxLength": 120},
            "bullets": {
                "type": "array",
                "minItems": min_bullets,
                "maxItems": MAX_BULLETS,
                "items": {"type": "string", "minLength": 1, "maxLength": BULLET_CHARS},
            },
            "notes": {"type": "string", "maxLength": 1500},
        },
        "required": ["heading", "bullets", "notes"],
        "additionalProperties": False,
    }


def deck_schema(
    min_slides: int = MIN_SLIDES, max_slides: int = MAX_SLIDES, min_bullets: int = MIN_BULLETS
) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "title": {"type": "string", "minLength": 1, "maxLength": 200},
            "slides": {
                "type": "array",
                "minItems": min_slides,
                "maxItems": max_slides,
                "items": slide_schema(min_bullets),
            },
        },
        "required": ["title", "slides"],
        "additionalProperties": False,
    }


# What the model is asked for; a deck kept has fewer where bullets no passage supports were
# left out (acceptance.py), and an extractive one as many as the sources' sections give.
MODEL_SCHEMA = deck_schema()
SCHEMA = deck_schema(min_slides=1, min_bullets=1)
OUTPUT_TOKENS = 3200  # 15 slides of 5 bullets and notes, with room to spare


def prompt(video_format: str) -> tuple[dict[str, Any], str, int]:
    """The model's schema, instructions and max_tokens (a video's differ by format)."""
    return MODEL_SCHEMA, INSTRUCTIONS, OUTPUT_TOKENS


CITING = """- Every bullet is one short claim (at most one sentence) ending with the [n] marker \
of the passage that states it; cite several as [1][3]. Never invent a marker; never cite \
the summaries. No Markdown in the fields.
- Use only facts stated in the material. No outside knowledge."""

INSTRUCTIONS = f"""You make a slide deck from the user's documents, using only the numbered \
passages and the document summaries you are given.

- "title": the deck's title. "slides": {MIN_SLIDES} to {MAX_SLIDES} slides (about 8 suit \
most material), in the order of the documents: an overview first, a conclusion last.
- Each slide: a short "heading", {MIN_BULLETS} to {MAX_BULLETS} "bullets", and "notes": \
what a speaker says over the slide, two to four sentences, without markers.
{CITING}"""

REVISE_INSTRUCTIONS = f"""You revise one slide of a deck as the user asks, using only the \
numbered passages you are given (the passages the deck cites).

- Reply with the slide alone: a "heading", {MIN_BULLETS} to {MAX_BULLETS} "bullets" and \
speaker "notes" without markers.
{CITING}"""


PIECE_BULLET_CHARS = 200


def _slide(reply: dict[str, Any], number: int) -> dict[str, Any]:
    """The slide, each bullet cited; a bullet stopped at its most characters (cut off
    mid-word by a grammar) is left out, and a slide left with none is asked again."""
    bullets = [
        cited(bullet.strip().lstrip("•–-* ").strip(), number)  # the slide draws its own dots
        for bullet in reply["bullets"]
        if len(bullet) < PIECE_BULLET_CHARS
    ]
    if not bullets:
        raise InvalidOutput(
            f"every bullet ran to {PIECE_BULLET_CHARS} characters and was cut off; make each "
            "a short line"
        )
    if COPIED_RE.search(" ".join(reply["notes"].split())):  # a video speaks them
        raise InvalidOutput(
            "the notes are copied from the page (a list or a table); write them as plain "
            "sentences a speaker says"
        )
    return {"slides": [{**reply, "bullets": bullets}]}


def by_passage(*, notes: str, title: Callable[[str], str], most: int = MAX_SLIDES) -> Piece:
    """A slide per passage, with `notes` saying what its speaker notes are."""
    return Piece(
        schema={
            "type": "object",
            "properties": {
                "heading": {"type": "string", "minLength": 1, "maxLength": 80},
                "bullets": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": MAX_BULLETS - 1,
                    "items": {"type": "string", "minLength": 1, "maxLength": PIECE_BULLET_CHARS},
                },
                "notes": {"type": "string", "maxLength": 1000},
            },
            "required": ["heading", "bullets", "notes"],
            "additionalProperties": False,
        },
        instructions=f"""You make one slide of a deck from one part of the user's documents.

- "heading": a short title naming its topic (a few words).
- "bullets": 2 to {MAX_BULLETS - 1} short claims it states, each at most one sentence, no \
Markdown.
- "notes": {notes}
{ONE_PASSAGE}""",
        max_tokens=600,
        part=_slide,
        assemble=lambda parts, title: {"title": title, "slides": joined(parts, "slides")},
        title=title,
        most=most,
        own_words=without_table_lines("bullets"),
    )


BY_PASSAGE = by_passage(
    notes="what a speaker says over the slide, two or three plain sentences.",
    title=lambda notebook: _("Slides: %(notebook)s") % {"notebook": notebook},
)


def check(data: dict[str, Any], passages: int) -> None:
    """After acceptance: every slide left still cites a passage; the deck keeps a slide."""
    if not data["slides"]:
        raise InvalidOutput("the deck has no slide left whose bullets a passage supports")
    for number, slide in enumerate(data["slides"], start=1):
        for bullet in slide["bullets"]:
            require_markers(bullet, passages, what=f"slide {number}'s bullet {bullet[:40]!r}")


def extractive(inputs: Inputs, *, notebook_title: str) -> dict[str, Any]:
    """A slide per major section (chapter) of each source, in reading order, or per section
    when the chapters are too few for a deck: its title the heading, its central sentences
    the bullets, the sections it covers the notes; the largest kept when there are more
    than a deck holds."""
    read = [(source, read_sentences(source_chunks(source))) for source in inputs.sources]
    groups = [(source, _groups(sentences, by_chapter=True)) for source, sentences in read]
    by_chapter = sum(len(found) for _source, found in groups) >= MIN_SLIDES
    if not by_chapter:
        groups = [(source, _groups(sentences, by_chapter=False)) for source, sentences in read]
    # A chapter's slide needs two bullets; a short source's section may say one thing.
    fewest = 2 if by_chapter else 1
    slides: list[tuple[int, int, dict[str, Any]]] = []  # (size, order, slide)
    for source, found in groups:
        among = [
            [
                s
                for s in members
                if stands_alone(s.text, s.language)
                and len(s.text.split()) <= EXTRACTIVE_BULLET_WORDS
            ]
            for _title, members, _sections in found
        ]
        for (title, members, sections), candidates in zip(found, among, strict=True):
            chosen = central(candidates, among=among, limit=EXTRACTIVE_BULLETS)
            if len(chosen) < fewest:
                continue
            notes = ""
            if sections:
                notes = _("It covers %(sections)s.") % {"sections": ", ".join(sections[:8])}
            slide = {
                "heading": clipped(title or source.title, 120),
                "bullets": [
                    f"{clipped(sentence.text, BULLET_CHARS - 8)} {cite(inputs, sentence.chunk)}"
                    for sentence in chosen
                ],
                "notes": notes,
            }
            slides.append((len(members), len(slides), slide))
    kept = sorted(slides, key=lambda each: -each[0])[:MAX_SLIDES]
    return {
        "title": _("Slides: %(notebook)s") % {"notebook": notebook_title},
        "slides": [slide for _size, _order, slide in sorted(kept, key=lambda each: each[1])],
    }


def _groups(
    sentences: list[Sentence], *, by_chapter: bool
) -> list[tuple[str, list[Sentence], list[str]]]:
    """(title, sentences, the sections it covers) per major part, or per section."""
    if by_chapter:  # the text before the first chapter (conventions, a preface) is no topic
        return [
            (part.title, part.sentences, part.sections)
            for part in parts(sentences)
            if not part.is_front_matter
        ]
    grouped: dict[tuple[str, ...], list[Sentence]] = {}
    for sentence in sentences:
        grouped.setdefault(sentence.section, []).append(sentence)
    return [(path[-1] if path else "", members, []) for path, members in grouped.items()]


def readable(data: dict[str, Any]) -> str:
    lines = [f"# {data['title']}", ""]
    for slide in data["slides"]:
        lines += [f"## {slide['heading']}", ""]
        lines += [f"- {bullet}" for bullet in slide["bullets"]]
        if slide.get("notes"):
            lines += ["", slide["notes"]]
        lines.append("")
    return "\n".join(lines)
