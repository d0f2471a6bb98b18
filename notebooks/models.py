from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from citations.models import CitedPassage
from library.models import Source


class Notebook(models.Model):
    class ChatGoal(models.TextChoices):
        DEFAULT = "default", _("Default: answer from the sources")
        LEARNING = "learning", _("Learning guide: explain, then ask back")
        CUSTOM = "custom", _("Custom instructions")

    class ChatLength(models.TextChoices):
        SHORTER = "shorter", _("Shorter")
        DEFAULT = "default", _("Default")
        LONGER = "longer", _("Longer")

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notebooks"
    )
    title = models.CharField(max_length=200)
    sources = models.ManyToManyField(Source, through="NotebookSource", related_name="notebooks")
    created_at = models.DateTimeField(auto_now_add=True)
    # How the chat answers here, for everyone who asks (generation/chat_style.py).
    chat_goal = models.CharField(max_length=20, choices=ChatGoal.choices, default="default")
    chat_instructions = models.TextField(max_length=2000, blank=True)
    chat_length = models.CharField(max_length=20, choices=ChatLength.choices, default="default")

    # Not stored: what the person reading it in this request may do there ("owner",
    # "editor", "viewer"), set by sharing.access.get_notebook for the views and templates.
    role: str = ""

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["owner", "title"], name="notebook_unique_title")
        ]

    def __str__(self) -> str:
        return self.title


class NotebookSource(models.Model):
    notebook = models.ForeignKey(Notebook, on_delete=models.CASCADE)
    source = models.ForeignKey(Source, on_delete=models.CASCADE)
    # Who put it here: the source's owner (their own file, in a notebook they own or edit),
    # or someone who took it from the public library, whose link lives only while the
    # source stays public (sharing/access.py). None: that person's account is gone.
    added_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    added_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["notebook", "source"], name="notebook_source_unique")
        ]

    def save(self, *args, **kwargs) -> None:
        if self._state.adding and self.added_by_id is None:
            # Nobody named: the source's owner put it there (their own file).
            self.added_by_id = Source.objects.values_list("owner_id", flat=True).get(
                pk=self.source_id
            )
        super().save(*args, **kwargs)


class ConversationQuerySet(models.QuerySet["Conversation"]):
    def with_first_question(self) -> ConversationQuerySet:
        """Annotated with the first question, so a list of titles takes one query."""
        first = Message.objects.filter(conversation=models.OuterRef("pk"), role=Message.Role.USER)
        return self.annotate(
            first_question=models.Subquery(first.order_by("created_at", "id").values("content")[:1])
        )


class Conversation(models.Model):
    notebook = models.ForeignKey(Notebook, on_delete=models.CASCADE, related_name="conversations")
    # Whose it is: in a shared notebook each person's conversations are their own, until
    # they post one to the notebook for everyone who may read it (sharing/access.py).
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="conversations"
    )
    posted = models.BooleanField(default=False)
    TITLE_MAX = 200
    # Empty until the user renames it: then the first question names it (display_title).
    title = models.CharField(max_length=TITLE_MAX, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = ConversationQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return self.display_title

    def rename(self, title: str) -> None:
        """Its title, spaces tidied and cut to fit; "" names it by its first question again."""
        title = " ".join(title.split())
        self.title = title[: Conversation.TITLE_MAX]
        self.save(update_fields=["title"])

    def post(self, posted: bool) -> None:
        """Post it to the notebook (everyone who may read the notebook reads it), or not."""
        self.posted = posted
        self.save(update_fields=["posted"])

    @property
    def display_title(self) -> str:
        if self.title:
            return self.title
        if hasattr(self, "first_question"):
            first = self.first_question
        else:
            asked = self.messages.filter(role=Message.Role.USER).order_by("created_at", "id")
            first = asked.values_list("content", flat=True).first()
        if not first:
            return gettext("New conversation")
        text = " ".join(first.split())
        # Cut at a word, so the title does not end in half of one.
        return text if len(text) <= 60 else text[:60].rsplit(" ", 1)[0].rstrip() + "…"


class Message(models.Model):
    class Role(models.TextChoices):
        USER = "user"
        ASSISTANT = "assistant"

    class Mode(models.TextChoices):
        LLM = "llm"
        EXTRACTIVE = "extractive"
        REFUSAL = "refusal"
        # A memory command's reply (/remember, /forget, /memory, /help): no model call.
        COMMAND = "command"

    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, related_name="messages"
    )
    role = models.CharField(max_length=20, choices=Role.choices)
    content = models.TextField()
    # How an assistant message was made; empty for the user's own messages.
    mode = models.CharField(max_length=20, choices=Mode.choices, blank=True)
    model = models.CharField(max_length=200, blank=True)
    # On a user's question: what the search looked for when query rewriting made the
    # follow-up stand alone (generation/rewrite.py); empty: the question as asked.
    search_query = models.TextField(blank=True)
    # On an answer: the sources the asker had ticked, the only ones searched; None: all of
    # the notebook's (and answers stored before sources could be chosen).
    source_ids = ArrayField(models.BigIntegerField(), null=True, blank=True)
    # On an answer: the asker's remembered facts the model was given with the question
    # (memory/), copied as they were then; shown beside it, never cited.
    memories = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]


class Citation(CitedPassage):
    """An [n] in an answer."""

    message = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="citations")

    class Meta:
        ordering = ["message_id", "n"]
        constraints = [models.UniqueConstraint(fields=["message", "n"], name="citation_unique_n")]


class UntickedSource(models.Model):
    """A source someone unticked in a notebook: their questions and documents there leave it
    out until they tick it again. The unticked are kept, not the ticked, so a source added
    later is used by everyone at once."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    notebook = models.ForeignKey(Notebook, on_delete=models.CASCADE, related_name="+")
    source = models.ForeignKey(Source, on_delete=models.CASCADE, related_name="+")

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["user", "notebook", "source"], name="unticked_source_unique"
            )
        ]


class Note(models.Model):
    """A note beside a notebook's sources: written by its author in Markdown, or an answer
    saved with its citations. Its author's, read by the notebook's other readers once posted
    (sharing/access.py); as a source (kind "note") it is searched and cited like an upload."""

    notebook = models.ForeignKey(Notebook, on_delete=models.CASCADE, related_name="notes")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notes"
    )
    title = models.CharField(max_length=200, blank=True)
    content = models.TextField(max_length=50_000)
    posted = models.BooleanField(default=False)
    # The answer it was saved from; its citations were copied (NoteCitation), so they stay
    # when the conversation is deleted.
    from_message = models.ForeignKey(
        Message, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Its searchable copy while it is a source of the notebook.
    source = models.OneToOneField(
        Source, null=True, blank=True, on_delete=models.SET_NULL, related_name="from_note"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at", "-id"]

    def __str__(self) -> str:
        return self.display_title

    def post(self, posted: bool) -> None:
        """Post it to the notebook (its other readers read it), or make it private again."""
        self.posted = posted
        self.save(update_fields=["posted", "updated_at"])

    @property
    def display_title(self) -> str:
        if self.title:
            return self.title
        text = " ".join(self.content.split()).lstrip("#").strip()
        if not text:
            return gettext("Untitled note")
        return text if len(text) <= 60 else text[:60].rsplit(" ", 1)[0].rstrip() + "…"


class NoteCitation(CitedPassage):
    """An [n] in a note, copied from the answer the note was saved from."""

    note = models.ForeignKey(Note, on_delete=models.CASCADE, related_name="citations")

    class Meta:
        ordering = ["note_id", "n"]
        constraints = [models.UniqueConstraint(fields=["note", "n"], name="note_citation_unique_n")]


class SourceGuide(models.Model):
    """A ready source's key topics and the questions it can answer (notebooks/guides.py),
    written at its ingest: from its outline offline, or by one model call."""

    class Mode(models.TextChoices):
        OUTLINE = "outline", "From the source's headings"
        LLM = "llm", "Written by the chat model"

    source = models.OneToOneField(Source, on_delete=models.CASCADE, related_name="guide")
    topics = models.JSONField(default=list)
    questions = models.JSONField(default=list)
    mode = models.CharField(max_length=20, choices=Mode.choices, blank=True)
    # Why the model's guide could not be made (the outline's is shown instead).
    error = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"guide of {self.source_id}"
