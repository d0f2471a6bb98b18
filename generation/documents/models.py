"""Documents Loupe makes from a notebook's sources: reports, quizzes, tables, mind maps,
infographics, audio overviews, flashcards, slide decks and video overviews (the "studio")."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop

from citations.models import CitedPassage
from library.background_work import BackgroundWork
from library.models import Source
from notebooks.models import Notebook
from texts import Text


def audio_upload_path(document: GeneratedDocument, filename: str) -> str:
    return f"generated/{document.owner_id}/{document.pk}/{filename}"


# A kind as it is named inside a sentence of a stored message ("… for this mind map"), so a
# German reader reads "Mindmap" where the English one reads "mind map", never "mindmap".
_KIND_IN_A_SENTENCE = {
    "report": gettext_noop("report"),
    "quiz": gettext_noop("quiz"),
    "table": gettext_noop("table"),
    "mindmap": gettext_noop("mind map"),
    "infographic": gettext_noop("infographic"),
    "audio": gettext_noop("audio overview"),
    "flashcards": gettext_noop("set of flashcards"),
    "slides": gettext_noop("slide deck"),
    "video": gettext_noop("video overview"),
}


def kind_name(kind: str) -> Text:
    """A document kind named in a message that is stored, shown in the reader's language."""
    return Text(_KIND_IN_A_SENTENCE[kind])


class GeneratedDocument(BackgroundWork):
    """A document made by a worker from a notebook's sources (status, stage, progress, error:
    library/background_work.py), then indexed as a source of its own."""

    class Kind(models.TextChoices):
        REPORT = "report", _("Report")
        QUIZ = "quiz", _("Quiz")
        TABLE = "table", _("Table")
        MINDMAP = "mindmap", _("Mind map")
        INFOGRAPHIC = "infographic", _("Infographic")
        AUDIO = "audio", _("Audio overview")
        FLASHCARDS = "flashcards", _("Flashcards")
        SLIDES = "slides", _("Slide deck")
        VIDEO = "video", _("Video overview")

    class Stage(models.TextChoices):
        NONE = "", _("None")
        GATHERING = "gathering", _("Gathering passages")
        CONDENSING = "condensing", _("Condensing long sources")
        WRITING = "writing", _("Writing")
        SPEAKING = "speaking", _("Speaking")
        RENDERING = "rendering", _("Rendering")
        INDEXING = "indexing", _("Indexing")

    class AudioFormat(models.TextChoices):
        DEEP_DIVE = "deep_dive", _("Deep dive: two hosts talk it through")
        BRIEF = "brief", _("Brief: one voice, about two minutes")
        DEBATE = "debate", _("Debate: two hosts take sides")

    class Length(models.TextChoices):
        SHORT = "short", _("Short")
        DEFAULT = "default", _("Default length")
        LONG = "long", _("Long")

    class VideoFormat(models.TextChoices):
        EXPLAINER = "explainer", _("Explainer: narrated slides that walk through the sources")
        BRIEF = "brief", _("Brief: a few narrated slides, about two minutes")

    class Mode(models.TextChoices):
        LLM = "llm", _("Written by the chat model")
        EXTRACTIVE = "extractive", _("Extractive: sentences and figures from your sources")

    notebook = models.ForeignKey(
        Notebook, on_delete=models.CASCADE, related_name="generated_documents"
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="generated_documents"
    )
    kind = models.CharField(max_length=20, choices=Kind.choices)
    stage = models.CharField(max_length=20, choices=Stage.choices, blank=True)
    mode = models.CharField(max_length=20, choices=Mode.choices, blank=True)
    # "" until made: then the language it was written in (the user's pick, else the sources').
    language = models.CharField(max_length=8, blank=True)
    # The sources its maker had ticked, the only ones it reads; None: all the notebook's.
    source_ids = ArrayField(models.BigIntegerField(), null=True, blank=True)
    # What the user asked for; "" lets the sources decide.
    requested_language = models.CharField(max_length=8, blank=True)
    title = models.CharField(max_length=300, blank=True)
    # The kind's structured data (its JSON schema in generation/documents/kinds/), with [n]
    # markers renumbered to this document's citations.
    content = models.JSONField(null=True, blank=True)
    model = models.CharField(max_length=200, blank=True)
    audio = models.FileField(upload_to=audio_upload_path, max_length=500, blank=True)
    audio_seconds = models.FloatField(null=True, blank=True)
    audio_engine = models.CharField(max_length=100, blank=True)
    audio_engine_i18n = models.JSONField(null=True, blank=True, editable=False)
    # An audio overview's format and length (generation/documents/kinds/audio.py).
    audio_format = models.CharField(
        max_length=20, choices=AudioFormat.choices, default=AudioFormat.DEEP_DIVE
    )
    length = models.CharField(max_length=10, choices=Length.choices, default=Length.DEFAULT)
    # A slide deck's exports and a video overview's MP4 (generation/documents/decks.py,
    # video.py), made with the document and again when a slide is revised.
    pptx = models.FileField(upload_to=audio_upload_path, max_length=500, blank=True)
    pdf = models.FileField(upload_to=audio_upload_path, max_length=500, blank=True)
    video = models.FileField(upload_to=audio_upload_path, max_length=500, blank=True)
    video_seconds = models.FloatField(null=True, blank=True)
    video_format = models.CharField(
        max_length=20, choices=VideoFormat.choices, default=VideoFormat.EXPLAINER
    )
    # A model's claims that no passage supports, left out of the document
    # (generation/documents/acceptance.py).
    unsupported_dropped = models.PositiveIntegerField(default=0)
    # The searchable copy: a Source of kind "generated" in the notebook, once indexed.
    source = models.OneToOneField(
        Source, null=True, blank=True, on_delete=models.SET_NULL, related_name="generated_from"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return self.title or f"{self.get_kind_display()} #{self.pk}"

    @property
    def data(self) -> dict[str, Any]:
        return self.content if isinstance(self.content, dict) else {}


class DocumentCitation(CitedPassage):
    """An [n] in a generated document (a report's sentence, a quiz answer's explanation)."""

    document = models.ForeignKey(
        GeneratedDocument, on_delete=models.CASCADE, related_name="citations"
    )

    class Meta:
        ordering = ["document_id", "n"]
        constraints = [
            models.UniqueConstraint(fields=["document", "n"], name="document_citation_unique_n")
        ]


class SlideRevision(BackgroundWork):
    """One slide of a ready deck rewritten by the chat model as a person asked, by a worker
    (status, stage, error: library/background_work.py): the page shows the slide "revising…"
    until it is done, and the reason on the slide when it failed. The deck stays ready
    meanwhile; the revised slide replaces the old one when the model's reply is accepted."""

    class Stage(models.TextChoices):
        NONE = "", _("None")
        REVISING = "revising", _("Revising the slide")
        RENDERING = "rendering", _("Drawing the exports")
        INDEXING = "indexing", _("Indexing")

    document = models.ForeignKey(
        GeneratedDocument, on_delete=models.CASCADE, related_name="slide_revisions"
    )
    number = models.PositiveIntegerField()  # 1-based, as the page numbers slides
    instruction = models.CharField(max_length=500)
    # Who asked, and pays for the model call.
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="slide_revisions"
    )
    stage = models.CharField(max_length=20, choices=Stage.choices, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"slide {self.number} of {self.document}"
