"""Token counts for calls whose API reports none (some OpenAI-compatible servers omit `usage`).

An estimate, not the provider's tokenizer: a word or punctuation mark counts one token per
four characters, rounded up, the usual rule of thumb for BPE vocabularies. It keeps such
calls from being recorded, and billed, as free.
"""

from __future__ import annotations

import math
import re
from typing import Any

TOKEN_RE = re.compile(r"\w+|[^\w\s]")


def estimate_tokens(*texts: str) -> int:
    return sum(math.ceil(len(token) / 4) for text in texts for token in TOKEN_RE.findall(text))


def reported_or_estimated(usage: Any, field: str, *texts: str) -> int:
    """The API's own count when it gave one, else the estimate over `texts`."""
    reported = getattr(usage, field, None) if usage is not None else None
    if isinstance(reported, int):
        return reported
    return estimate_tokens(*texts)
