from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models

from notebooks.models import Message, Notebook


class QuestionLog(models.Model):
    """One question asked in a notebook and how it went: what was searched, how long each
    step took, what the model cost, whether it was refused, how many citations held. Kept
    QUESTION_LOG_DAYS (then deleted by the upkeep job), and apart from the conversation,
    so a person's log can be deleted while their conversations stay, and the figures
    stay when a conversation is deleted."""

    # None once the notebook is deleted: the site's figures keep its questions (until
    # QUESTION_LOG_DAYS), as `evaluate` deletes the notebooks it asked in.
    notebook = models.ForeignKey(
        Notebook, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    # The stored answer, while its conversation exists.
    message = models.OneToOneField(
        Message, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    question = models.TextField()
    # What the search looked for when it was not the question (a rewritten follow-up).
    search_query = models.TextField(blank=True)
    mode = models.CharField(max_length=20)  # the answer's: llm, extractive, refusal
    model = models.CharField(max_length=200, blank=True)
    refused = models.BooleanField()
    # Milliseconds from the question's arrival: the search done (None: no search ran), the
    # first word of the answer shown, the answer stored.
    retrieval_ms = models.PositiveIntegerField(null=True, blank=True)
    first_word_ms = models.PositiveIntegerField(null=True, blank=True)
    total_ms = models.PositiveIntegerField()
    # Every model call the question made (its embedding, a rewrite, the answer).
    input_tokens = models.PositiveIntegerField(default=0)
    output_tokens = models.PositiveIntegerField(default=0)
    cost = models.DecimalField(max_digits=20, decimal_places=10, default=0)
    citations = models.PositiveSmallIntegerField(default=0)
    supported_citations = models.PositiveSmallIntegerField(default=0)
    cited_source_ids = ArrayField(models.BigIntegerField(), default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["notebook", "created_at"], name="questionlog_notebook_time")
        ]

    def __str__(self) -> str:
        return self.question[:80]
