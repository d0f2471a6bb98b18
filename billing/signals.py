from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db.models.signals import post_save
from django.dispatch import receiver

from billing.services import grant_starting_credit


@receiver(post_save, sender=settings.AUTH_USER_MODEL)
def give_new_user_starting_credit(sender: Any, instance: Any, created: bool, **kwargs: Any) -> None:
    if created and not kwargs.get("raw"):
        grant_starting_credit(instance)
