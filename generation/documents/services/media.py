"""The files a document is made into besides its text: an audio overview's MP3, a slide
deck's PPTX and PDF, a video overview's MP4."""

from __future__ import annotations

from typing import Any

from django.core.files.base import ContentFile

from generation.documents.deadline import Deadline
from generation.documents.inputs import GenerationFailed
from generation.documents.models import GeneratedDocument
from notebooks.markers import strip_markers
from texts import Text, assign, message_of


def speak(
    document: GeneratedDocument, data: dict[str, Any], language: str, deadline: Deadline
) -> None:
    """The script spoken as an MP3; an engine that is missing or fails fails the document
    with its message (synthesize_dialogue says what to configure)."""
    from generation.speech import synthesize_dialogue

    document.report_progress(stage=GeneratedDocument.Stage.SPEAKING)
    turns = [(turn["speaker"], strip_markers(turn["text"])) for turn in data["turns"]]
    try:
        spoken = synthesize_dialogue(
            turns, language=language, user=document.owner, before_each=deadline.check
        )
    except ValueError as exc:
        raise GenerationFailed(
            Text("The script cannot be spoken: %(error)s.", error=message_of(exc))
        ) from exc
    _replace(document.audio, f"overview-{document.pk}.mp3", spoken.mp3)
    document.audio_seconds = round(spoken.seconds, 2)
    assign(document, "audio_engine", spoken.engine)


def place(source_title: str, chunk: Any) -> str:
    """Where a passage is, for a slide's footnote: "Manual, p. 12"."""
    page = (chunk.page_label or chunk.page) if chunk is not None else None
    return f"{source_title}, p. {page}" if page else source_title


def export_deck(document: GeneratedDocument, data: dict[str, Any], places: dict[int, str]) -> None:
    """The deck's PPTX and PDF, replacing the files of an earlier making."""
    from generation.documents import decks

    document.report_progress(stage=GeneratedDocument.Stage.RENDERING)
    for field, suffix, made in (
        (document.pptx, "pptx", decks.pptx_bytes(data, places)),
        (document.pdf, "pdf", decks.pdf_bytes(data, places)),
    ):
        _replace(field, f"slides-{document.pk}.{suffix}", made)


def render_video(
    document: GeneratedDocument,
    data: dict[str, Any],
    places: dict[int, str],
    language: str,
    deadline: Deadline,
) -> None:
    """The narrated slides as an MP4; a missing speech engine or a bound passed fails the
    document saying so, and keeps no file."""
    from generation.documents import video

    def report(done: int, total: int) -> None:
        document.report_progress(stage=GeneratedDocument.Stage.RENDERING, done=done, total=total)

    report(0, len(data["slides"]) + 1)
    try:
        rendered = video.render(
            data,
            places,
            language=language,
            user=document.owner,
            remaining=deadline.remaining,
            on_progress=report,
        )
    except ValueError as exc:
        raise GenerationFailed(
            Text("The narration cannot be spoken: %(error)s.", error=message_of(exc))
        ) from exc
    _replace(document.video, f"overview-{document.pk}.mp4", rendered.mp4)
    document.video_seconds = round(rendered.seconds, 2)
    assign(document, "audio_engine", rendered.engine)


def _replace(field: Any, name: str, content: bytes) -> None:
    """The file of `field` (an audio, deck or video file) replaced by `content`; the row is
    saved by the caller."""
    if field:
        field.delete(save=False)
    field.save(name, ContentFile(content), save=False)
