"""The token counts a call is billed with: the API's own, else an estimate over its texts
(language/tokens.py), so that a server that omits `usage` does not make calls free."""

from __future__ import annotations

from typing import Any

from language.tokens import estimate_tokens


def reported_or_estimated(usage: Any, field: str, *texts: str) -> int:
    """The API's own count when it gave one, else the estimate over `texts`."""
    reported = getattr(usage, field, None) if usage is not None else None
    if isinstance(reported, int):
        return reported
    return estimate_tokens(*texts)
