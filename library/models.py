from __future__ import annotations

import logging

from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.postgres.search import SearchVectorField
from django.db import connection, models, transaction
from django.utils.translation import gettext_lazy as _
from pgvector.django import VectorField

from library.background_work import BackgroundWork
from texts import Text

logger = logging.getLogger(__name__)


def source_upload_path(source: Source, filename: str) -> str:
    # Content-addressed per owner: the same bytes are never stored twice for one person.
    return f"sources/{source.owner_id}/{source.sha256[:2]}/{source.sha256}/{filename}"


class Source(BackgroundWork):
    """One document in a person's library; the same bytes exist once per owner.

    Its work (status, stage, progress, error: library/background_work.py) is reading it into
    chunks, then embedding them: it is ready, searched by its words, while its vectors are
    made (stage "embedding"), and finished once they are.
    """

    class Kind(models.TextChoices):
        PDF = "pdf", _("PDF")
        TEXT = "text", _("Text")
        # Word, PowerPoint, Excel, OpenDocument, EPUB, RTF, HTML and CSV files: one loader
        # (ingest/loaders/documents.py) tells their format from the whole file, and the
        # source's reader line names it ("PowerPoint slides").
        DOCUMENT = "document", _("Document")
        URL = "url", _("Web page")
        IMAGE = "image", _("Image")
        AUDIO = "audio", _("Audio")
        # A document Loupe generated from a notebook's other sources (report, quiz, ...).
        GENERATED = "generated", _("Generated document")
        # One of a notebook's notes, made a source by its author (notebooks.Note).
        NOTE = "note", _("Note")

    class PdfCapture(models.TextChoices):
        TEXT = "text", _("Text layer only")
        VISION = "vision", _("Read every page as an image")
        AUTO = "auto", _("Text layer, images for pages without one")

    class SummaryMode(models.TextChoices):
        LLM = "llm", _("Written by the chat model")
        EXTRACTIVE = "extractive", _("Sentences from the document")

    class Stage(models.TextChoices):
        NONE = "", _("None")
        FETCHING = "fetching", _("Fetching the page")
        READING = "reading", _("Reading")
        READING_IMAGES = "reading_images", _("Reading pages as images")
        TRANSCRIBING = "transcribing", _("Transcribing")
        # After the last page: the passages cut into chunks and written with their words'
        # index, then (ready, searched by its words) the summary, the guide, the vectors.
        INDEXING = "indexing", _("Indexing its words")
        SUMMARIZING = "summarizing", _("Writing the summary")
        WRITING_GUIDE = "writing_guide", _("Writing the guide")
        EMBEDDING = "embedding", _("Embedding")

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="sources"
    )
    kind = models.CharField(max_length=20, choices=Kind.choices)
    title = models.CharField(max_length=500)
    filename = models.CharField(max_length=500)
    sha256 = models.CharField(max_length=64)
    # Empty for a web page until the worker has fetched it.
    file = models.FileField(upload_to=source_upload_path, max_length=500, blank=True)
    url = models.URLField(max_length=2000, blank=True)
    pdf_capture = models.CharField(
        max_length=10, choices=PdfCapture.choices, default=PdfCapture.AUTO
    )
    # Which reader produced the text (e.g. "PDF text layer", "rapidocr"), for the source info.
    reader = models.CharField(max_length=200, blank=True)
    # Beside each text the worker stores: its msgid and parameters, so a page shows it in
    # the reader's language (texts/__init__.py); the text itself stays English.
    reader_i18n = models.JSONField(null=True, blank=True, editable=False)
    size_bytes = models.PositiveBigIntegerField(default=0)
    page_count = models.PositiveIntegerField(null=True, blank=True)
    chunk_count = models.PositiveIntegerField(default=0)
    # Detected at ingest (ISO 639-1, "" when unknown). `search_config` is the PostgreSQL text
    # search configuration its chunks' search vectors were made with; a search stems the
    # question with the same one, so both sides' words meet.
    language = models.CharField(max_length=8, blank=True)
    search_config = models.CharField(max_length=40, default="simple")
    # Pages read while reading a PDF, chunks while embedding; "" once the source is
    # finished (its summary, guide and vectors made).
    stage = models.CharField(max_length=20, choices=Stage.choices, blank=True)
    # A paragraph about the source for generated documents and the admin, never for answers
    # (ingest/summaries.py). Made after the chunks; failing to make it fails nothing.
    summary = models.TextField(blank=True)
    summary_mode = models.CharField(max_length=20, choices=SummaryMode.choices, blank=True)
    summary_error = models.CharField(max_length=500, blank=True)
    summary_error_i18n = models.JSONField(null=True, blank=True, editable=False)
    # In the public library: every signed-in person may read it and add it to their
    # notebooks, where it is linked (one set of chunks serves them all), never copied.
    # Who may publish, change and unpublish: sharing/access.py.
    public = models.BooleanField(default=False)
    published_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="published_sources",
    )
    published_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["owner", "sha256"], name="source_unique_per_owner")
        ]
        indexes = [
            models.Index(
                fields=["-published_at"], condition=models.Q(public=True), name="source_public"
            )
        ]
        permissions = [("publish_source", "Can publish sources to the public library")]

    def __str__(self) -> str:
        return self.title

    @property
    def is_finished(self) -> bool:
        """Failed, or ready with its summary, guide and every chunk's vector made. A source
        still at one of those is ready (searched by its words) but not finished."""
        if self.status == self.Status.READY:
            return self.stage == self.Stage.NONE
        return self.status == self.Status.FAILED

    def fail(self, message: Text | str, *, read: bool = False) -> None:
        """The source failed. One that failed after this run read it (while embedding) loses
        its chunks, so that a failed source never holds chunks half embedded."""
        if read:
            with transaction.atomic():
                Chunk.objects.filter(source=self).delete()
                self.chunk_count = 0
                Source.objects.filter(pk=self.pk).update(chunk_count=0)
                super().fail(message)
            return
        # Two runs of one source can overlap (a worker that lost its heartbeat while finishing
        # it, and the stalled-job retry): the one that lost the race on the chunks must not fail
        # the source the other made ready.
        with transaction.atomic():
            current = Source.objects.select_for_update().filter(pk=self.pk).first()
            if current is not None and current.status == self.Status.READY:
                logger.warning(
                    "source %s: a run failed (%s) after another made it ready", self.pk, message
                )
                self.refresh_from_db()
                return
            super().fail(message)


class Chunk(models.Model):
    """A window of a source's passage, with where it came from and its vector."""

    source = models.ForeignKey(Source, on_delete=models.CASCADE, related_name="chunks")
    ordinal = models.PositiveIntegerField()
    page = models.PositiveIntegerField(null=True, blank=True)
    # The number the page prints ("5", "xii") where it differs from `page`, its place in
    # the file; "" where they agree or the source has no pages.
    page_label = models.CharField(max_length=40, blank=True)
    # The section the chunk sits in, outermost first: ["Network setup", "5.5 Wi-Fi"].
    section = models.JSONField(default=list, blank=True)
    text = models.TextField()
    # Character span of the chunk inside its passage (the page's text for a PDF).
    char_start = models.PositiveIntegerField()
    char_end = models.PositiveIntegerField()
    # No fixed dimension: each vector records the model that made it, a search only
    # compares vectors of the active model, and a re-embed can write a new model's
    # vectors beside the old ones before switching. NULL until the chunk is embedded: its
    # words are searchable as soon as the source is read (ingest/services/pipeline.py).
    embedding = VectorField(null=True)
    embedding_model = models.CharField(max_length=200)
    # to_tsvector(source.search_config, text), written with the chunks. A plain column, not a
    # generated one: a generated column cannot read the source's configuration.
    search_vector = SearchVectorField(null=True)

    class Meta:
        ordering = ["source_id", "ordinal"]
        constraints = [
            models.UniqueConstraint(fields=["source", "ordinal"], name="chunk_unique_ordinal")
        ]
        indexes = [
            models.Index(fields=["embedding_model", "source"]),
            # The full-text vectors are indexed per embedding model, by partial GIN indexes
            # made with the model's HNSW index (library/vector_indexes.py), not here.
        ]

    def __str__(self) -> str:
        return f"{self.source_id}#{self.ordinal}"


class Preferences(models.Model):
    """A person's defaults; a person without a row has the defaults below."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="preferences"
    )
    pdf_capture = models.CharField(
        _("default PDF capture mode"),
        max_length=10,
        choices=Source.PdfCapture.choices,
        default=Source.PdfCapture.AUTO,
    )

    class Meta:
        verbose_name_plural = "preferences"

    def __str__(self) -> str:
        return f"preferences of {self.user}"

    @classmethod
    def of(cls, user: AbstractBaseUser) -> Preferences:
        """The user's preferences, unsaved defaults when they never changed any."""
        return cls.objects.filter(user_id=user.pk).first() or cls(user_id=user.pk)


class ChunkEmbedding(models.Model):
    """A chunk's vector by a model being switched to (`manage.py reembed`).

    The active model's vector stays on the chunk itself, so a search reads one table and
    one model; this table only holds the next model's vectors while they are
    made. The switch copies them onto the chunks and deletes them (retrieval/reembed.py).
    """

    chunk = models.ForeignKey(Chunk, on_delete=models.CASCADE, related_name="next_embeddings")
    model = models.CharField(max_length=200)
    embedding = VectorField()  # any dimension, like Chunk.embedding

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["chunk", "model"], name="chunk_embedding_unique_model")
        ]

    def __str__(self) -> str:
        return f"{self.chunk_id} by {self.model}"


class ChunkWindow(models.Model):
    """The vector of one part of a chunk (RETRIEVAL_WINDOW_WORDS words), by one model.

    A 420-token chunk says several things and its one vector blurs them; hybrid search
    scores each chunk by its closest part, and a chunk with parts has their mean for its
    own vector (retrieval/windows.py). Windows of the
    active model serve; a model switch builds the next model's beside them and drops the
    old ones (retrieval/reembed.py). A chunk without windows of the active model (short, or
    written before they existed or while RETRIEVAL_WINDOWS was off) is scored by its own
    vector alone.
    """

    chunk = models.ForeignKey(Chunk, on_delete=models.CASCADE, related_name="windows")
    model = models.CharField(max_length=200)
    ordinal = models.PositiveIntegerField()
    embedding = VectorField()  # any dimension, like Chunk.embedding

    class Meta:
        constraints = [
            # Also the index a search reads a pool chunk's windows through.
            models.UniqueConstraint(
                fields=["chunk", "model", "ordinal"], name="chunk_window_unique_ordinal"
            )
        ]

    def __str__(self) -> str:
        return f"{self.chunk_id}/{self.ordinal} by {self.model}"


class EmbeddingState(models.Model):
    """Which embedding model serves searches (one row, id 1), and the switch under way.

    Kept in the database, not only in settings, so that every web process and worker
    switches at the same moment without a restart, and a changed setting alone never
    makes a search compare a question's vector with chunks of another model. No row: the
    configured model serves (nothing was embedded yet). The row is written with the first
    chunks, and by the switch.
    """

    active_model = models.CharField(max_length=200)
    # The `dimensions` asked of an OpenAI-compatible model; None: the model's own.
    active_dimensions = models.PositiveIntegerField(null=True, blank=True)
    # The model `manage.py reembed` is switching to; "" when none.
    target_model = models.CharField(max_length=200, blank=True)
    target_dimensions = models.PositiveIntegerField(null=True, blank=True)
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    @classmethod
    def lock_for_writing(cls, *, model: str, dimensions: int | None) -> EmbeddingState:
        """The state, share-locked until the transaction ends; a missing row is created
        with `model` (the configured one), pinning the model of the first vectors.

        A writer of chunk vectors holds it while it writes, the switch takes it exclusively:
        so the switch sees every chunk committed before it, and a writer after it sees the
        new active model (and must not write the old model's vectors).
        """
        with connection.cursor() as cursor:
            cursor.execute(
                "INSERT INTO library_embeddingstate (id, active_model, active_dimensions, "
                "target_model, progress_done, progress_total, updated_at) "
                "VALUES (1, %s, %s, '', 0, 0, now()) ON CONFLICT (id) DO NOTHING",
                [model, dimensions],
            )
        return cls.objects.raw("SELECT * FROM library_embeddingstate WHERE id = 1 FOR SHARE")[0]

    def __str__(self) -> str:
        if self.target_model:
            return (
                f"{self.active_model}, switching to {self.target_model} "
                f"({self.progress_done}/{self.progress_total})"
            )
        return self.active_model
