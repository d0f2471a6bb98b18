"""Pages that point into the document instead of saying something: tables of contents,
lists of figures and tables, indexes.

Their lines end in page numbers, after dot leaders or a comma-separated list. They are
legible text (never worth an OCR or vision call, though their dots fail the letter-share
rule) and they are not passages: every section title of a chapter on one page matches
many questions' words, crowds body pages out of the search and reads as junk when quoted.
"""

from __future__ import annotations

import re

# "1.3.1 Customization of MC . . . . . . 17", "Figure 2: Layout ........ xii"
_LEADER_ENTRY = re.compile(r"(?:\.\s?){4,}\s*(?:\d{1,4}|[ivxlcdm]{1,7})\s*$", re.IGNORECASE)
# "apt-get, 12, 45-47" (an index), "2.1 Installing 17" (a contents line without leaders)
_INDEX_ENTRY = re.compile(r",\s*\d{1,4}(?:\s*[-–]\s*\d{1,4})?\s*$")
_NUMBERED_ENTRY = re.compile(r"^\s*(?:\d+(?:\.\d+)*|[A-Z](?:\.\d+)+)\.?\s+\S.*\s\d{1,4}\s*$")
# Most lines entries, or a short page (a contents page's last few lines) of nothing else.
MIN_ENTRIES, MIN_SHARE = 5, 0.5
MIN_ENTRIES_SHORT, MIN_SHARE_SHORT = 3, 0.6


def is_navigation_page(text: str) -> bool:
    lines = [line for line in text.split("\n") if line.strip()]
    if len(lines) < MIN_ENTRIES_SHORT:
        return False
    entries = sum(
        1
        for line in lines
        if _LEADER_ENTRY.search(line) or _INDEX_ENTRY.search(line) or _NUMBERED_ENTRY.match(line)
    )
    share = entries / len(lines)
    return (entries >= MIN_ENTRIES and share >= MIN_SHARE) or (
        entries >= MIN_ENTRIES_SHORT and share >= MIN_SHARE_SHORT
    )
