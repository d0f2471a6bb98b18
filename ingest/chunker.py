"""The one chunker: windows of regex tokens with overlap, never crossing a passage.

A token is a run of word characters or one punctuation character (`\\w+|[^\\w\\s]`, Unicode).
Counting these instead of a model's subword tokens keeps chunking independent of the
embedding provider; 420 tokens land near 800 model tokens for German, 550 for English.

A hostile file must not make a chunk of megabytes (one embedding request, one row, one
full-text vector): a run of word characters counts as a token per MAX_TOKEN_CHARS, and a
window padded with whitespace is cut short at MAX_CHUNK_CHARS.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ingest.passages import Passage

MAX_TOKEN_CHARS = 100  # longer than any word of any language; base64, hashes, or an attack
TOKEN_RE = re.compile(rf"\w{{1,{MAX_TOKEN_CHARS}}}|[^\w\s]")
# 420 tokens of 100 characters with a space between each: a legitimate window fits.
MAX_CHUNK_CHARS = 50_000


@dataclass(frozen=True)
class ChunkDraft:
    text: str
    page: int | None
    char_start: int
    char_end: int


def chunk_passages(
    passages: Iterable[Passage], *, window: int = 420, overlap: int = 50
) -> list[ChunkDraft]:
    if not 0 <= overlap < window:
        raise ValueError(f"overlap ({overlap}) must be at least 0 and below window ({window})")
    chunks: list[ChunkDraft] = []
    for passage in passages:
        spans = [match.span() for match in TOKEN_RE.finditer(passage.text)]
        start = 0
        while start < len(spans):
            end = min(start + window, len(spans))
            while end - start > 1 and spans[end - 1][1] - spans[start][0] > MAX_CHUNK_CHARS:
                end -= 1
            char_start, char_end = spans[start][0], spans[end - 1][1]
            chunks.append(
                ChunkDraft(
                    text=passage.text[char_start:char_end],
                    page=passage.page,
                    char_start=char_start,
                    char_end=char_end,
                )
            )
            if end >= len(spans):
                break
            # A full window steps by window - overlap; a window cut short still moves on.
            start = max(start + 1, end - overlap)
    return chunks
