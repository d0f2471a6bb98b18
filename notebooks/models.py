from __future__ import annotations

from django.conf import settings
from django.db import models

from library.models import Chunk, Source


class Notebook(models.Model):
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notebooks"
    )
    title = models.CharField(max_length=200)
    sources = models.ManyToManyField(Source, through="NotebookSource", related_name="notebooks")
    created_at = models.DateTimeField(auto_now_add=True)

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
    added_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["notebook", "source"], name="notebook_source_unique")
        ]


class Conversation(models.Model):
    notebook = models.ForeignKey(Notebook, on_delete=models.CASCADE, related_name="conversations")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]


class Message(models.Model):
    class Role(models.TextChoices):
        USER = "user"
        ASSISTANT = "assistant"

    class Mode(models.TextChoices):
        LLM = "llm"
        EXTRACTIVE = "extractive"
        REFUSAL = "refusal"

    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, related_name="messages"
    )
    role = models.CharField(max_length=20, choices=Role.choices)
    content = models.TextField()
    # How an assistant message was made; empty for the user's own messages.
    mode = models.CharField(max_length=20, choices=Mode.choices, blank=True)
    model = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]


class Citation(models.Model):
    """What an [n] in an answer points at: the chunk retrieved for it, kept with a copy
    of the quote so the citation still reads correctly if the chunk is later replaced."""

    message = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="citations")
    n = models.PositiveIntegerField()
    chunk = models.ForeignKey(Chunk, null=True, on_delete=models.SET_NULL, related_name="+")
    source = models.ForeignKey(Source, null=True, on_delete=models.SET_NULL, related_name="+")
    source_title = models.CharField(max_length=500)
    page = models.PositiveIntegerField(null=True, blank=True)
    # The sentence of the chunk that best supports the citing claim, verbatim.
    quote = models.TextField()
    similarity = models.FloatField()
    # Whether every sentence citing [n] is supported by the quote (generation/verification);
    # None for citations stored before the check existed.
    supported = models.BooleanField(null=True)
    support_score = models.FloatField(null=True)

    class Meta:
        ordering = ["message_id", "n"]
        constraints = [models.UniqueConstraint(fields=["message", "n"], name="citation_unique_n")]
