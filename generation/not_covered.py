"""The answer given when the sources do not cover the question.

Loupe's search judges it first (retrieval/coverage.py), before any model call; with a chat
model, the model may also reply NOT_IN_SOURCES (the system prompt tells it to), and that
reply becomes the same fixed answer. Either way the asker reads where the closest passages
were, with no citation: nothing in them supports an answer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from django.utils.translation import gettext as _

from generation import prompts
from retrieval.search import Hit

PLACES = 3  # the closest passages named, best first

# The sentinel, however a model spells it: "NOT_IN_SOURCES", "**Not in sources**", "not in
# sources." A reply that says it and cites a passage ([n]) answered after all.
_SENTINEL_RE = re.compile(r"\bnot[\s_-]*in[\s_-]*sources\b", re.IGNORECASE)
_MARKER_RE = re.compile(r"\[\d+\]")


def model_declined(reply: str) -> bool:
    """Whether the chat model's reply says the passages do not answer (and cites none)."""
    return bool(_SENTINEL_RE.search(reply)) and not _MARKER_RE.search(reply)


def reply(hits: Sequence[Hit]) -> str:
    """The fixed answer, in the active language, naming the closest hits' places."""
    places: list[str] = []
    for hit in hits:
        place = _place(hit)
        if place not in places:
            places.append(place)
        if len(places) == PLACES:
            break
    if not places:
        return _(prompts.NO_MATCH_REPLY)
    return _(prompts.NOT_COVERED_REPLY) % {"places": "; ".join(places)}


def _place(hit: Hit) -> str:
    # The PDF's page, as the citations and the page view number it, not the label the page
    # prints ("24" on PDF page 32): a person opens the page the answer names.
    chunk = hit.chunk
    title = f"“{chunk.source.title}”"
    section = chunk.section[-1] if chunk.section else ""
    if chunk.page and section:
        return _("%(title)s, %(section)s, page %(page)s") % {
            "title": title,
            "section": section,
            "page": chunk.page,
        }
    if chunk.page:
        return _("%(title)s, page %(page)s") % {
            "title": title,
            "page": chunk.page,
        }
    if section:
        return _("%(title)s, %(section)s") % {"title": title, "section": section}
    return title
