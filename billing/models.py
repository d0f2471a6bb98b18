from __future__ import annotations

from django.conf import settings
from django.db import models


class Usage(models.Model):
    """One row per model call: who caused it, which model, how much it consumed.

    Prices and credit come later; the row is written now so no call goes unrecorded.
    """

    class Kind(models.TextChoices):
        EMBEDDING = "embedding"
        CHAT = "chat"
        VISION = "vision"
        STT = "stt"
        TTS = "tts"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    kind = models.CharField(max_length=20, choices=Kind.choices)
    model = models.CharField(max_length=200)
    input_tokens = models.PositiveIntegerField(default=0)
    output_tokens = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.kind} {self.model} ({self.input_tokens}+{self.output_tokens} tokens)"
