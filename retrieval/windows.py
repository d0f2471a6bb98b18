"""Windows: long chunks are embedded in parts, and hybrid search scores a chunk by its
closest part (retrieval/sql/hybrid.sql, `scored`).

Why: a chunk is 420 tokens (CHUNK_TOKENS), long enough to say several things, and its one
vector blurs them; a question about one of them matches that part far better than the
whole. On covid-qa-dev (README, "Retrieval quality") e5 alone finds the answer chunk in the
top 8 for 75 % of questions by the chunks' vectors and for 81-83 % by their best part of 80
words; in hybrid mode recall@8 / MRR@8 go from 0.894 / 0.728 to about 0.90 / 0.75.

The parts are consecutive and do not overlap (overlapping ones, twice the embedding,
measured the same). A chunk with parts is not embedded whole: its vector, which finds the
dense candidates (and the HNSW index holds), is the normalised mean of its parts' vectors,
so the parts cost no more embedding than the chunks did. A chunk that fits in one part
(at most 1.5 windows) gets none and is embedded as it is. Windows are made by the model
that made the chunk's vector, stored per model (library.ChunkWindow) and only compared
with a question embedded by the same model.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np
from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction

from library import embedding_state
from library.models import Chunk, ChunkWindow
from providers import embeddings
from providers.embeddings import EmbeddingModel
from retrieval import profiles

BATCH_SIZE = 32


def enabled_for(model: str) -> bool:
    """Whether chunks embedded by `model` get windows and are searched by them
    (RETRIEVAL_WINDOWS: "local" for the local models measured with them)."""
    if settings.RETRIEVAL_WINDOWS == "on":
        return True
    if settings.RETRIEVAL_WINDOWS == "local":
        return profiles.profile(model).windows
    return False


def split_windows(text: str, words: int) -> list[str]:
    """`text` cut into consecutive parts of `words` words (whitespace-separated); a last
    part shorter than half a window joins the one before it, so no part is a few stray
    words. Nothing for a text of at most 1.5 windows: its own vector stands for it."""
    tokens = text.split()
    if len(tokens) <= words + words // 2:
        return []
    starts = list(range(0, len(tokens), words))
    if len(tokens) - starts[-1] < words / 2:
        starts.pop()
    ends = starts[1:] + [len(tokens)]
    return [" ".join(tokens[start:end]) for start, end in zip(starts, ends, strict=True)]


def embed_windows(
    texts: list[str], *, model: EmbeddingModel, user: User | None
) -> list[list[list[float]]]:
    """For each text, its windows' vectors by `model` (none where it fits one window or the
    model gets no windows). One embedding call sequence for all of them, billed to `user`."""
    return embed_with_windows(texts, model=model, user=user, chunks=False)[1]


def embed_with_windows(
    texts: list[str],
    *,
    model: EmbeddingModel,
    user: User | None,
    on_progress: Callable[[int, int], None] | None = None,
    chunks: bool = True,
) -> tuple[list[list[float]], list[list[list[float]]]]:
    """The texts' vectors by `model` and, for each text, its windows' (as embed_windows).

    Where windows are on, a text with parts is not embedded whole: its vector is the mean
    of its parts' vectors (normalised), so the parts cost no more embedding than the chunks
    did (README, "Retrieval quality": as good as embedding both, 0.902 / 0.750 against
    0.905 / 0.750 on covid-qa-dev; e5 embeds the parts in 0.69 of the whole's time); a text
    too short for parts is embedded as it is. `chunks` False: the windows only (chunks
    that keep the vectors they have). `on_progress(done, total)` counts texts, each worth
    its share of the work."""
    parts = [
        split_windows(text, settings.RETRIEVAL_WINDOW_WORDS) if enabled_for(model.name) else []
        for text in texts
    ]
    whole = [text for text, text_parts in zip(texts, parts, strict=True) if not text_parts]
    own = whole if chunks else []
    flat = [part for text_parts in parts for part in text_parts]
    work = len(own) + len(flat)

    def report(done: int, total: int) -> None:
        if on_progress is not None:
            on_progress(len(texts) * done // work, len(texts))

    embedded = (
        embeddings.embed_texts(own + flat, user=user, model=model, on_progress=report)
        if work
        else []
    )
    own_vectors = iter(embedded[: len(own)])
    position = len(own)
    vectors: list[list[float]] = []
    grouped: list[list[list[float]]] = []
    for text_parts in parts:
        part_vectors = embedded[position : position + len(text_parts)]
        position += len(text_parts)
        grouped.append(part_vectors)
        if not chunks:
            continue
        if part_vectors:
            mean = np.mean(np.asarray(part_vectors, dtype=np.float64), axis=0)
            vectors.append((mean / np.linalg.norm(mean)).tolist())
        else:
            vectors.append(next(own_vectors))
    return vectors, grouped


def window_rows(
    chunk_ids: Iterable[int], vectors: list[list[list[float]]], *, model: str
) -> list[ChunkWindow]:
    """Unsaved ChunkWindow rows for the chunks' window vectors (as embed_windows returns)."""
    return [
        ChunkWindow(chunk_id=chunk_id, model=model, ordinal=ordinal, embedding=vector)
        for chunk_id, chunk_vectors in zip(chunk_ids, vectors, strict=True)
        for ordinal, vector in enumerate(chunk_vectors)
    ]


def store_windows(chunk_ids: list[int], vectors: list[list[list[float]]], *, model: str) -> None:
    """Save the windows; a chunk deleted meanwhile (its source processed again) is skipped
    by selecting again, the others are kept."""
    rows = window_rows(chunk_ids, vectors, model=model)
    if not rows:
        return
    try:
        with transaction.atomic():
            ChunkWindow.objects.bulk_create(rows, ignore_conflicts=True)
    except IntegrityError:
        alive = set(Chunk.objects.filter(id__in=chunk_ids).values_list("id", flat=True))
        ChunkWindow.objects.bulk_create(
            [row for row in rows if row.chunk_id in alive], ignore_conflicts=True
        )


def build_missing(
    *,
    model: EmbeddingModel | None = None,
    batch_size: int = BATCH_SIZE,
    on_batch: Callable[[int, int], None] | None = None,
) -> int:
    """Windows by `model` (None: the active one) for its chunks that have none yet: those
    written before windows existed or while they were off (`manage.py embed_windows`).
    Resumable: a batch that is stored stays stored. Returns the number of windows made;
    `on_batch(chunks_done, chunks_total)` after each batch."""
    model = model or embedding_state.active()
    if not enabled_for(model.name):
        raise ValueError(
            f"Windows are off for {model.name} (RETRIEVAL_WINDOWS={settings.RETRIEVAL_WINDOWS})."
        )
    pending = list(
        Chunk.objects.filter(embedding_model=model.name)
        .exclude(windows__model=model.name)
        .order_by("id")
        .values_list("id", "text")
    )
    # Chunks that fit one window get none; they need no embedding and are not pending.
    pending = [
        (chunk_id, text)
        for chunk_id, text in pending
        if split_windows(text, settings.RETRIEVAL_WINDOW_WORDS)
    ]
    made = 0
    for start in range(0, len(pending), batch_size):
        batch = pending[start : start + batch_size]
        vectors = embed_windows([text for _, text in batch], model=model, user=None)
        store_windows([chunk_id for chunk_id, _ in batch], vectors, model=model.name)
        made += sum(len(chunk_vectors) for chunk_vectors in vectors)
        if on_batch:
            on_batch(start + len(batch), len(pending))
    return made
