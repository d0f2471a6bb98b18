from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class Usage(models.Model):
    """One row per model call: who caused it, which model, how much it consumed and cost.

    A call the provider billed is recorded even when what it returned was useless (an empty
    answer, the wrong number of vectors, no text on a page): the row is written right after
    the response arrives, before it is checked (providers/chat.py, embeddings.py, vision.py).
    """

    class Kind(models.TextChoices):
        EMBEDDING = "embedding", _("Embedding")
        CHAT = "chat", _("Chat")
        VISION = "vision", _("Vision")
        STT = "stt", _("Speech to text")
        TTS = "tts", _("Text to speech")

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    kind = models.CharField(max_length=20, choices=Kind.choices)
    model = models.CharField(max_length=200)
    input_tokens = models.PositiveIntegerField(default=0)
    output_tokens = models.PositiveIntegerField(default=0)
    seconds = models.DecimalField(max_digits=12, decimal_places=3, default=0)
    images = models.PositiveIntegerField(default=0, help_text="Images or rendered pages.")
    # From the model's price at the time of the call; a later price change rewrites nothing.
    cost = models.DecimalField(max_digits=20, decimal_places=10, default=0)
    # What the call was for; kept (as null) when that thing is deleted, as the money is spent.
    source = models.ForeignKey(
        "library.Source", null=True, blank=True, on_delete=models.SET_NULL, related_name="usage"
    )
    notebook = models.ForeignKey(
        "notebooks.Notebook",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="usage",
    )
    message = models.ForeignKey(
        "notebooks.Message",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="usage",
    )
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "usage"

    def __str__(self) -> str:
        return f"{self.kind} {self.model} ({self.input_tokens}+{self.output_tokens} tokens)"


class CreditEntry(models.Model):
    """One line of a user's credit ledger; the balance is the sum of the amounts.

    Grants are positive, debits (one per priced usage row) negative. Nothing is ever
    updated: a correction is another entry.
    """

    class Kind(models.TextChoices):
        START = "start", "Starting credit"
        GRANT = "grant"
        DEBIT = "debit"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="credit_entries"
    )
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.GRANT)
    amount = models.DecimalField(max_digits=20, decimal_places=10)
    reason = models.CharField(max_length=500, blank=True)
    # Its msgid and parameters, for the reader's language (texts/__init__.py); None for a
    # reason an admin typed, shown as typed.
    reason_i18n = models.JSONField(null=True, blank=True, editable=False)
    usage = models.OneToOneField(
        Usage, null=True, blank=True, on_delete=models.SET_NULL, related_name="debit"
    )
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "credit entries"
        constraints = [
            # The starting credit is granted on demand too (users older than billing);
            # two requests doing so at once must not grant it twice.
            models.UniqueConstraint(
                fields=["user"], condition=models.Q(kind="start"), name="one_starting_credit"
            )
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} {self.amount} for {self.user}"


class CreditBalance(models.Model):
    """A user's balance, kept by the database itself: a trigger adds each CreditEntry's
    amount as the entry is written (migration 0004), in the same transaction. The check
    before every billed action then reads one row instead of summing a ledger that grows
    with every call (8 ms at 50 000 entries, and on). The ledger stays the record: the sum
    of its amounts is the balance (billing/tests/test_credit_balance.py)."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        primary_key=True,
        on_delete=models.CASCADE,
        related_name="credit_balance",
    )
    amount = models.DecimalField(max_digits=20, decimal_places=10, default=0)
    # The starting credit is among the entries (granted on demand to older users).
    started = models.BooleanField(default=False)

    def __str__(self) -> str:
        return f"{self.amount} for {self.user}"
