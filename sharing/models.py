"""Who else may open a notebook, and the record of every sharing and publishing act."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from library.models import Source
from notebooks.models import Notebook


class Role(models.TextChoices):
    """What a person may do in a notebook. The owner is the notebook's `owner`, never a
    Membership; the other two are granted by the owner."""

    OWNER = "owner", _("owner")
    EDITOR = "editor", _("editor")  # also add sources, ask, generate
    VIEWER = "viewer", _("viewer")  # read sources, generated documents, posted conversations


class Membership(models.Model):
    """A notebook shared with one person."""

    notebook = models.ForeignKey(Notebook, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(
        max_length=10, choices=[(Role.EDITOR, Role.EDITOR.label), (Role.VIEWER, Role.VIEWER.label)]
    )
    added_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["notebook", "user"], name="membership_unique_user"),
            models.CheckConstraint(
                condition=models.Q(role__in=["editor", "viewer"]), name="membership_role_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user} ({self.role}) in {self.notebook}"


class AuditEvent(models.Model):
    """One act of sharing or publishing: who did what, to which notebook or source, for
    whom, when. Kept when the people or objects go (their names are copied)."""

    class Action(models.TextChoices):
        SHARED = "shared", _("shared")
        ROLE_CHANGED = "role_changed", _("changed the role")
        REVOKED = "revoked", _("revoked")
        PUBLISHED = "published", _("published")
        UNPUBLISHED = "unpublished", _("unpublished")

    action = models.CharField(max_length=20, choices=Action.choices)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    actor_name = models.CharField(max_length=150)
    notebook = models.ForeignKey(
        Notebook, null=True, blank=True, on_delete=models.SET_NULL, related_name="audit_events"
    )
    source = models.ForeignKey(
        Source, null=True, blank=True, on_delete=models.SET_NULL, related_name="audit_events"
    )
    # What the act was about, as it was named then.
    subject = models.CharField(max_length=500)
    # The person a notebook was shared with or revoked from.
    member = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    member_name = models.CharField(max_length=150, blank=True)
    role = models.CharField(max_length=10, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.actor_name} {self.action} {self.subject}"
