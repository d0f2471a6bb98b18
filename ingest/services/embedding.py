"""A read source's vectors, made behind its words in committed batches that yield to
other sources."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from procrastinate.contrib.django.models import ProcrastinateJob

from billing.services import deferred_usage
from ingest import chunk_rows
from library import embedding_state
from library.models import Chunk, ChunkEmbedding, ChunkWindow, EmbeddingState, Source
from library.vector_indexes import ensure_model_indexes_quietly
from providers import embeddings
from providers.errors import ProviderError
from retrieval import windows

if TYPE_CHECKING:
    from ingest.services.early_vectors import EarlyVectors

logger = logging.getLogger(__name__)

# The rest of a long source's embedding waits behind new sources (procrastinate runs the
# highest priority first; new jobs have 0).
CONTINUATION_PRIORITY = -1

# Batches last about FAST_BATCH_SECONDS to SLOW_BATCH_SECONDS: a batch is what a source
# added meanwhile may have to wait for (a job yields between batches), and the local e5's
# time for a batch of 8 chunks varies sixfold with the machine's load.
FAST_BATCH_SECONDS = 1.0

SLOW_BATCH_SECONDS = 2.5

MAX_EMBED_CHUNKS = 512

# The batch size each embedding model reached in this process: a job starts where the last
# one left off rather than at INGEST_EMBED_CHUNKS again, whatever the model's speed here.
_batch_sizes: dict[str, int] = {}


def embed_pending(
    source: Source,
    *,
    until: float | None,
    at_least_one: bool = True,
    early: EarlyVectors | None = None,
) -> bool:
    """Embed the source's chunks that have no vector yet, a batch per transaction, until
    none is left (True), or (with `until`, a time.monotonic()) until the next batch would
    end after `until` or another ingest job is waiting (False): the job yields.

    With `early` (the job that read the source), the first batches are the chunks whose
    vectors were asked for while they were written, as many as have answered each time;
    they are written before the job yields, as they were paid for and wait on no model."""
    embedded_here = not at_least_one
    last_batch_seconds = 0.0
    source.report_progress(
        stage=Source.Stage.EMBEDDING,
        done=_embedded(source),
        total=source.chunk_count,
    )
    # A full batch that took under a second doubles the next one: a fast embedder (an API,
    # the test server) is not held to a slow local model's batch and its many commits; one
    # that took long shrinks it, as a source added meanwhile may wait for it.
    model = embedding_state.active().name
    size = _batch_sizes.get(model, settings.INGEST_EMBED_CHUNKS)
    while True:
        pending = list(
            Chunk.objects.filter(source=source, embedding__isnull=True)
            .order_by("ordinal")
            .values_list("pk", "text")[: size if early is None else MAX_EMBED_CHUNKS]
        )
        if not pending:
            Source.objects.filter(pk=source.pk).update(
                stage=Source.Stage.NONE,
                error="",
                error_i18n=None,
                progress_done=source.chunk_count,
                progress_total=source.chunk_count,
                updated_at=timezone.now(),
            )
            source.stage, source.error, source.error_i18n = Source.Stage.NONE, "", None
            source.progress_done = source.progress_total = source.chunk_count
            return True
        in_hand = early.in_hand([text for _, text in pending]) if early is not None else 0
        if not in_hand:
            early = None  # the chunks after those asked for early are asked for as they come
        pending = pending[: in_hand or size]
        ids, texts = [pk for pk, _ in pending], [text for _, text in pending]
        if (
            not in_hand
            and until is not None
            and embedded_here
            and (time.monotonic() + last_batch_seconds > until or _others_waiting())
        ):
            return False
        batch_started = time.monotonic()
        _embed_batch(source, ids, texts, early=early)
        # A batch of early vectors says nothing of the model's pace.
        if not in_hand:
            last_batch_seconds = time.monotonic() - batch_started
            if last_batch_seconds < FAST_BATCH_SECONDS and len(pending) == size:
                size = min(size * 2, MAX_EMBED_CHUNKS)
            elif last_batch_seconds > SLOW_BATCH_SECONDS:
                # As many chunks as would have taken SLOW_BATCH_SECONDS at this batch's pace.
                size = max(
                    1, min(size, int(len(pending) * SLOW_BATCH_SECONDS / last_batch_seconds))
                )
            _batch_sizes[model] = size
        embedded_here = True
        source.report_progress(
            stage=Source.Stage.EMBEDDING,
            done=_embedded(source),
            total=source.chunk_count,
        )


def embeds_after_reading(*, chunk_count: int, until: float | None) -> bool:
    """Whether the job that has just read a source of `chunk_count` chunks will go on to
    embed them (as embed_pending decides), rather than hand the embedding on at once."""
    if until is None or chunk_count <= settings.INGEST_EMBED_CHUNKS:
        return True
    return time.monotonic() < until and not _others_waiting()


def forget_batch_sizes() -> None:
    """Start every model's batches at INGEST_EMBED_CHUNKS again (tests)."""
    _batch_sizes.clear()


def _others_waiting() -> bool:
    """Whether another ingest job is due: a source added meanwhile, or another source's
    embedding handed on. A job that embeds yields to it between batches."""
    due = Q(scheduled_at__isnull=True) | Q(scheduled_at__lte=timezone.now())
    return ProcrastinateJob.objects.filter(due, queue_name="ingest", status="todo").exists()


def _embedded(source: Source) -> int:
    return Chunk.objects.filter(source=source, embedding__isnull=False).count()


# A chunk's vector and its windows' vectors (retrieval/windows.py), by one model.
Vectors = tuple[list[list[float]], list[list[list[float]]]]


def _embed_batch(
    source: Source, ids: list[int], texts: list[str], *, early: EarlyVectors | None = None
) -> None:
    """Embed these chunks by the active model (and by the next one, during a switch) and
    write their vectors in one transaction.

    During a model switch (retrieval/reembed.py) the chunks get the vectors of both models:
    the active one's serve now, the next one's at the switch. A switch that ends while the
    batch is embedded leaves its vectors of no use: the batch is embedded again, by the
    model that is active now.

    With `early`, the vectors asked for early (early_vectors.py) serve where they can.
    """
    written = False
    while not written:
        model, target = embedding_state.active(), embedding_state.target()
        # The calls' usage rows are written together, in one commit instead of one per
        # request.
        with deferred_usage():
            taken = early.take(texts, model=model) if early is not None else None
            vectors: Vectors = (
                (taken, [[] for _ in texts])
                if taken is not None
                else windows.embed_with_windows(texts, model=model, user=source.owner)
            )
        early = None  # a second round embeds by the model active then
        next_vectors = _by_next_model(source, texts, target)
        written = _write_vectors(
            ids, vectors, model=model, target=target, next_vectors=next_vectors
        )
    # The active model's HNSW and full-text indexes come with its first vectors (after: a
    # no-op).
    ensure_model_indexes_quietly(model=model.name, dimensions=len(vectors[0][0]))


def _by_next_model(
    source: Source, texts: list[str], target: embeddings.EmbeddingModel | None
) -> Vectors | None:
    """The texts' vectors by the model being switched to, if any. Its failing must not
    fail the source: the re-embed job gives these chunks its vectors before it switches."""
    if target is None:
        return None
    try:
        return windows.embed_with_windows(texts, model=target, user=source.owner)
    except ProviderError as exc:
        logger.warning("embedding source %s by %s: %s", source.pk, target.name, exc)
        return None


def _write_vectors(
    ids: list[int],
    vectors: Vectors,
    *,
    model: embeddings.EmbeddingModel,
    target: embeddings.EmbeddingModel | None,
    next_vectors: Vectors | None,
) -> bool:
    """Write the chunks' vectors by `model` (and the next model's); False, writing nothing,
    when `model` is no longer the active one (a switch ended meanwhile)."""
    chunk_vectors, window_vectors = vectors
    with transaction.atomic():
        state = EmbeddingState.lock_for_writing(model=model.name, dimensions=model.dimensions)
        if state.active_model != model.name:
            return False
        # Only the chunks still waiting: a re-read of the source may have replaced them.
        written = chunk_rows.write_vectors(ids=ids, vectors=chunk_vectors, model=model.name)
        kept = [index for index, pk in enumerate(ids) if pk in written]
        _write_windows(ids, kept, window_vectors, model=model.name)
        # A switch that began after we read `target` embeds these chunks itself before it
        # switches (it checks under the exclusive lock).
        if target and next_vectors and next_vectors[0] and state.target_model == target.name:
            next_chunk_vectors, next_window_vectors = next_vectors
            ChunkEmbedding.objects.bulk_create(
                ChunkEmbedding(
                    chunk_id=ids[index], model=target.name, embedding=next_chunk_vectors[index]
                )
                for index in kept
            )
            _write_windows(ids, kept, next_window_vectors, model=target.name)
    return True


def _write_windows(
    ids: list[int], kept: list[int], window_vectors: list[list[list[float]]], *, model: str
) -> None:
    """The windows' vectors of the chunks at the `kept` indexes (those still waiting)."""
    if window_vectors:
        ChunkWindow.objects.bulk_create(
            windows.window_rows(
                [ids[index] for index in kept],
                [window_vectors[index] for index in kept],
                model=model,
            )
        )


def continue_later(source: Source) -> None:
    """Queue the rest of the source's embedding as a job of its own, at a lower priority:
    a source added meanwhile is read (and a small one finished) before it goes on."""
    from ingest.tasks import ingest_source

    ingest_source.configure(priority=CONTINUATION_PRIORITY).defer(source_id=source.pk)
