"""A video overview: a slide deck whose speaker notes are its narration, rendered as an MP4 of
the slides, each shown while its narration is spoken (generation/documents/video.py). Two
formats: an explainer (6 to 10 slides, a minute or so of narration each) and a brief (3 to
5 slides, about two minutes in all)."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _

from generation.documents.inputs import Inputs
from generation.documents.kinds import slides
from generation.documents.pieces import Piece
from notebooks.markers import strip_markers

FOCUS = slides.FOCUS
EXPLAINER, BRIEF = "explainer", "brief"
# Slides and words of narration per slide, by format: a voice says about 150 words a minute.
SLIDES = {EXPLAINER: (6, 10), BRIEF: (3, 5)}
NARRATION_WORDS = {EXPLAINER: 70, BRIEF: 35}

SCHEMA = slides.SCHEMA
check = slides.check
readable = slides.readable


def prompt(video_format: str) -> tuple[dict[str, Any], str, int]:
    low, high = SLIDES[video_format]
    words = NARRATION_WORDS[video_format]
    schema = slides.deck_schema(min_slides=low, max_slides=high)
    instructions = f"""You make the slides of a narrated video overview of the user's \
documents, using only the numbered passages and the document summaries you are given.

- "title": the video's title. "slides": {low} to {high} slides in the order of the \
documents: an overview first, a conclusion last.
- Each slide: a short "heading", {slides.MIN_BULLETS} to {slides.MAX_BULLETS} "bullets", \
and "notes": the narration spoken while the slide is shown, about {words} words of plain \
spoken sentences, without markers, lists or Markdown; say numbers as a speaker would.
{slides.CITING}"""
    tokens = high * (slides.MAX_BULLETS * 45 + words * 2 + 40) + 200
    return schema, instructions, tokens


def by_passage(video_format: str) -> Piece:
    """A slide per passage, its notes the narration; as many as the format's slides."""
    words = NARRATION_WORDS[video_format]
    return slides.by_passage(
        notes=f"the narration spoken while the slide is shown, about {words} words of plain "
        "spoken sentences, without lists or Markdown; say numbers as a speaker would.",
        title=lambda notebook: _("Video overview: %(notebook)s") % {"notebook": notebook},
        most=SLIDES[video_format][1],
    )


def extractive(
    inputs: Inputs, *, notebook_title: str, video_format: str = EXPLAINER
) -> dict[str, Any]:
    """The offline deck (slides.extractive), as many slides as the format takes, each
    narrated by its heading and its bullets' sentences (a brief: its first bullet)."""
    deck = slides.extractive(inputs, notebook_title=notebook_title)
    _low, high = SLIDES[video_format]
    chosen = deck["slides"][:high]
    for slide in chosen:
        said = [strip_markers(bullet) for bullet in slide["bullets"]]
        if video_format == BRIEF:
            said = said[:1]
        slide["notes"] = " ".join([f"{slide['heading']}.", *said])
    return {
        "title": _("Video overview: %(notebook)s") % {"notebook": notebook_title},
        "slides": chosen,
    }


INSTRUCTIONS = prompt(EXPLAINER)[1]
