from __future__ import annotations

from django.db import models


class RateCounter(models.Model):
    """How many times `key` (an action and who did it) happened in one fixed time window.

    In PostgreSQL, not in a per-process cache, so the limit holds across every web process
    on every machine; one upsert counts and reads (limits/services.py)."""

    key = models.CharField(max_length=200)
    window = models.BigIntegerField()  # the window's number: epoch seconds // its length
    count = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["key", "window"], name="rate_counter_unique_window")
        ]

    def __str__(self) -> str:
        return f"{self.key} #{self.window}: {self.count}"
