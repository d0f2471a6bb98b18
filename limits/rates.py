"""Rates as settings are written: "30/minute", "100/hour", "5/15minutes", "20/60" (seconds),
"off". Kept free of Django models so that config/settings/ can import it."""

from __future__ import annotations

import re
from typing import NamedTuple

from django.core.exceptions import ImproperlyConfigured

UNITS = {"s": 1, "second": 1, "m": 60, "min": 60, "minute": 60, "h": 3600, "hour": 3600}
UNITS |= {"d": 86400, "day": 86400}
RATE_RE = re.compile(r"^\s*(\d+)\s*/\s*(\d*)\s*([a-z]*?)s?\s*$")


class Rate(NamedTuple):
    requests: int  # allowed per window; 0: no limit
    seconds: int  # the window's length

    @property
    def enabled(self) -> bool:
        return self.requests > 0


def parse_rate(name: str, value: str) -> Rate:
    """`value` of the setting `name` as a Rate; ImproperlyConfigured names both when wrong."""
    if value.strip().lower() in {"off", "0", "none", ""}:
        return Rate(0, 1)
    match = RATE_RE.match(value.lower())
    unit = match.group(3) if match else None
    if not match or (unit and unit not in UNITS) or not (match.group(2) or unit):
        raise ImproperlyConfigured(
            f"{name} must be a rate like 30/minute, 100/hour, 5/15minutes or off; got {value!r}"
        )
    seconds = int(match.group(2) or 1) * UNITS.get(unit or "s", 1)
    if seconds <= 0:
        raise ImproperlyConfigured(f"{name} needs a window longer than 0 seconds; got {value!r}")
    return Rate(int(match.group(1)), seconds)
