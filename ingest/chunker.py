"""The one chunker: windows of regex tokens with overlap, never crossing a passage.

A token is a run of word characters or one punctuation character (`\\w+|[^\\w\\s]`, Unicode).
Counting these instead of a model's subword tokens keeps chunking independent of the
embedding provider; 420 tokens land near 800 model tokens for German, 550 for English.

A hostile file must not make a chunk of megabytes (one embedding request, one row, one
full-text vector): a run of word characters counts as a token per MAX_TOKEN_CHARS, and a
window padded with whitespace is cut short at MAX_CHUNK_CHARS.

Windows do not cross a section's start either (`Passage.sections`), so that a chunk is about
one thing and carries one section path; a stretch shorter than MIN_SECTION_TOKENS before a
start (a heading right before its first subheading) joins the section after it.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable
from dataclasses import dataclass

from ingest.passages import Passage
from ingest.structure import section_at

MAX_TOKEN_CHARS = 100  # longer than any word of any language; base64, hashes, or an attack
TOKEN_RE = re.compile(rf"\w{{1,{MAX_TOKEN_CHARS}}}|[^\w\s]")
# 420 tokens of 100 characters with a space between each: a legitimate window fits.
MAX_CHUNK_CHARS = 50_000
MIN_SECTION_TOKENS = 40


@dataclass(frozen=True)
class ChunkDraft:
    text: str
    page: int | None
    char_start: int
    char_end: int
    section: tuple[str, ...] = ()
    page_label: str = ""


def chunk_passages(
    passages: Iterable[Passage], *, window: int = 420, overlap: int = 50
) -> list[ChunkDraft]:
    if not 0 <= overlap < window:
        raise ValueError(f"overlap ({overlap}) must be at least 0 and below window ({window})")
    chunks: list[ChunkDraft] = []
    for passage in passages:
        spans = [match.span() for match in TOKEN_RE.finditer(passage.text)]
        for first, last in _section_ranges(passage, spans):
            chunks.extend(_windows(passage, spans, first, last, window=window, overlap=overlap))
    return chunks


def _section_ranges(passage: Passage, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """[first, last) token ranges of the passage that lie in one section each."""
    cuts = [0]
    for start in passage.sections:
        index = bisect.bisect_left(spans, start.offset, key=lambda span: span[0])
        if index - cuts[-1] >= MIN_SECTION_TOKENS:
            cuts.append(index)
    if len(cuts) > 1 and len(spans) - cuts[-1] < MIN_SECTION_TOKENS:
        cuts.pop()  # a heading at the very end: its few words stay with the text before
    return [(a, b) for a, b in zip(cuts, [*cuts[1:], len(spans)], strict=True) if b > a]


def _windows(
    passage: Passage,
    spans: list[tuple[int, int]],
    first: int,
    last: int,
    *,
    window: int,
    overlap: int,
) -> list[ChunkDraft]:
    chunks: list[ChunkDraft] = []
    start = first
    while start < last:
        end = min(start + window, last)
        while end - start > 1 and spans[end - 1][1] - spans[start][0] > MAX_CHUNK_CHARS:
            end -= 1
        char_start, char_end = spans[start][0], spans[end - 1][1]
        # A short heading stretch joined its section: the chunk is that section's.
        section = section_at(passage.sections, spans[min(start + MIN_SECTION_TOKENS, end) - 1][0])
        chunks.append(
            ChunkDraft(
                text=passage.text[char_start:char_end],
                page=passage.page,
                char_start=char_start,
                char_end=char_end,
                section=section,
                page_label=passage.page_label,
            )
        )
        if end >= last:
            break
        # A full window steps by window - overlap; a window cut short still moves on.
        start = max(start + 1, end - overlap)
    return chunks
