from __future__ import annotations

from django.conf import settings
from django.db import models

from notebooks.models import Notebook

# What one fact may hold, and how many a person keeps: each is given to the model with
# every question, so a fact is a sentence or two, and a list past this is no longer read.
MAX_FACT_CHARS = 500
MAX_FACTS = 100


class Memory(models.Model):
    """A fact a person asked Loupe to remember ("/remember I teach year 9 biology"): their
    own, given to the model as what they said about themselves, never searched or cited.
    For one notebook, or (notebook None) for all of theirs."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    notebook = models.ForeignKey(
        Notebook, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    text = models.CharField(max_length=MAX_FACT_CHARS)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["user", "notebook"], name="memory_user_notebook")]

    def __str__(self) -> str:
        return self.text
