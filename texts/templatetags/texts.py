from __future__ import annotations

from django import template
from django.db import models

from texts import shown

register = template.Library()


@register.filter
def stored(instance: models.Model, field: str) -> str:
    """`{{ source|stored:"error" }}`: the stored text of a field, in the reader's language
    where it was stored with its msgid (texts/__init__.py)."""
    return shown(getattr(instance, field, ""), getattr(instance, f"{field}_i18n", None))
