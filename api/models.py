"""Personal access tokens: what a program shows instead of a session to use Loupe as a person."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone


class AccessToken(models.Model):
    class Scope(models.TextChoices):
        READ = "read", "read"
        WRITE = "write", "write"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="access_tokens"
    )
    name = models.CharField(max_length=100)
    scope = models.CharField(max_length=10, choices=Scope.choices, default=Scope.READ)
    # sha256 of the token: the token itself is shown once and never stored. Its 256 random
    # bits make a slow, salted hash pointless, and a plain digest can be looked up.
    digest = models.CharField(max_length=64, unique=True)
    # The token's first characters, so that a list can tell tokens apart.
    prefix = models.CharField(max_length=16)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None

    @property
    def may_write(self) -> bool:
        return self.scope == self.Scope.WRITE

    def revoke(self) -> None:
        if self.revoked_at is None:
            self.revoked_at = timezone.now()
            self.save(update_fields=["revoked_at"])
