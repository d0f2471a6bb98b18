from __future__ import annotations

from django import template
from django.utils.formats import number_format

register = template.Library()


@register.filter
def seconds(milliseconds: float | None) -> str:
    """1234.5 → "1.2 s" (in the reader's number format); None → "—"."""
    if milliseconds is None:
        return "—"
    return f"{number_format(milliseconds / 1000, 1)} s"


@register.filter
def percent(rate: float | None) -> str:
    """0.125 → "12.5 %"; None → "—"."""
    if rate is None:
        return "—"
    return f"{number_format(rate * 100, 1)} %"
