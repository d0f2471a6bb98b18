"""The [n] citation markers that answers, notes and generated documents carry in their text."""

from __future__ import annotations

import re


def strip_markers(text: str) -> str:
    """`text` without its [n] markers (and the space before each), for what is read or
    drawn rather than clicked: the indexed copy, the spoken script, the SVG labels."""
    return STRIP_RE.sub("", text)


STRIP_RE = re.compile(r"[ \t]*\[\d+\]")
