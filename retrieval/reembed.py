"""Switching the embedding model without downtime (`manage.py reembed`).

Design: the active model's vector stays on the chunk (`Chunk.embedding`, with
`embedding_model`), so a search stays one SQL statement over one table and compares the
question with one model's vectors only. The next model's vectors are built beside them,
in `ChunkEmbedding`, by a background job in batches; a batch that is done stays done, so
an interrupted job resumes where it stopped. When every chunk has the next model's
vector, one transaction copies them onto the chunks, deletes the copies and names the
new model active in `EmbeddingState`: a search sees either the old model everywhere or
the new one everywhere. The vector column has no fixed dimension, so a model of another
dimension needs no schema change.

Each model's vectors have an HNSW index of their own, and its chunks' full-text vectors a
GIN index (library/vector_indexes.py). The next model's are made just before the switch,
empty, and filled by the switch's UPDATE: that makes the switch transaction longer (index
inserts per chunk; searches go on meanwhile, chunk writers wait), but the first search
after it finds the indexes in place. The old model's are dropped after it.

Chunks written while the switch is under way (ingest/services/embedding.py) get both models'
vectors. Writers hold a share lock on the state row while they write and the switch takes
it exclusively, then checks that no chunk lacks the new vector: none can slip through.
"""

from __future__ import annotations

from collections.abc import Callable

from django.db import IntegrityError, connection, transaction
from django.db.models import QuerySet
from procrastinate.exceptions import AlreadyEnqueued

from library import embedding_state
from library import vector_indexes as indexes
from library.models import Chunk, ChunkEmbedding, ChunkWindow, EmbeddingState
from providers.embeddings import EmbeddingModel
from retrieval import windows

BATCH_SIZE = 64


class NothingToDo(Exception):
    """The model asked for is already the active one."""


def start_reembed(*, model: EmbeddingModel) -> EmbeddingState:
    """Record `model` as the one to switch to and queue the job that builds its vectors.

    Starting again with the same model resumes; another model abandons the previous
    switch (its vectors are deleted). Raises NothingToDo when `model` is active already.
    """
    from retrieval.tasks import reembed_chunks

    active = embedding_state.active()
    with transaction.atomic():
        EmbeddingState.lock_for_writing(model=active.name, dimensions=active.dimensions)
        state = EmbeddingState.objects.select_for_update().get(pk=1)
        ChunkEmbedding.objects.exclude(model=model.name).delete()
        ChunkWindow.objects.exclude(model__in=[active.name, model.name]).delete()
        already_active = model.name == state.active_model
        if already_active:
            # Cancels a switch under way, if any.
            state.target_model, state.target_dimensions = "", None
            state.save()
        else:
            state.target_model, state.target_dimensions = model.name, model.dimensions
            _count_progress(state)
            state.save()
            # Deferred inside the transaction: the job exists exactly when the target
            # does. The queueing lock keeps a second job out while one waits; a running
            # one is harmless to duplicate (batches skip what is done, the switch checks).
            try:
                with transaction.atomic():
                    reembed_chunks.configure(queueing_lock="reembed").defer()
            except AlreadyEnqueued:
                pass  # the waiting job will build the new target's vectors
    if already_active:
        raise NothingToDo(f"{model.name} is the active embedding model already.")
    return state


def _missing(model: str) -> QuerySet[Chunk]:
    """Chunks without a vector by `model`, on themselves or beside them."""
    return Chunk.objects.exclude(embedding_model=model).exclude(next_embeddings__model=model)


def _count_progress(state: EmbeddingState) -> None:
    state.progress_total = Chunk.objects.count()
    state.progress_done = state.progress_total - _missing(state.target_model).count()


def run_reembed(
    *,
    batch_size: int = BATCH_SIZE,
    max_batches: int | None = None,
    on_batch: Callable[[EmbeddingState], None] | None = None,
) -> EmbeddingState:
    """Embed the chunks that lack the target model's vector, batch by batch, then switch.

    Stops early, resumable, after `max_batches`; `on_batch(state)` runs after each batch
    (searches keep using the active model meanwhile). Returns the state at the end.
    """
    state = EmbeddingState.objects.get(pk=1)
    target = EmbeddingModel(state.target_model, state.target_dimensions)
    batches = 0
    while state.target_model == target.name and target.name:
        batch = list(_missing(target.name).order_by("id").values_list("id", "text")[:batch_size])
        if not batch:
            dimensions = indexes.vector_dimensions(
                model=target.name, table="library_chunkembedding"
            )
            if dimensions:
                # Before the switch, while no chunk carries the new model: built empty at
                # once, they are filled by the switch's UPDATE, so large notebooks keep
                # their indexes from the first search after the switch.
                indexes.ensure_model_indexes(model=target.name, dimensions=dimensions)
            if _switch(target):
                state = EmbeddingState.objects.get(pk=1)
                if dimensions and state.active_model == target.name:
                    indexes.drop_other_model_indexes(model=target.name, dimensions=dimensions)
                return state
            continue  # chunks were written meanwhile without the new vector
        if max_batches is not None and batches >= max_batches:
            break
        # With the chunks' parts by the next model (retrieval/windows.py), stored first: a
        # batch whose vectors are stored is done, so its windows must be there by then.
        vectors, parts = windows.embed_with_windows(
            [text for _, text in batch], model=target, user=None
        )
        windows.store_windows([chunk_id for chunk_id, _ in batch], parts, model=target.name)
        try:
            with transaction.atomic():
                ChunkEmbedding.objects.bulk_create(
                    (
                        ChunkEmbedding(chunk_id=chunk_id, model=target.name, embedding=vector)
                        for (chunk_id, _), vector in zip(batch, vectors, strict=True)
                    ),
                    ignore_conflicts=True,
                )
        except IntegrityError:
            pass  # a chunk was deleted (its source re-processed) meanwhile: select again
        batches += 1
        state = EmbeddingState.objects.get(pk=1)
        if state.target_model == target.name:
            _count_progress(state)
            state.save(update_fields=["progress_done", "progress_total", "updated_at"])
        if on_batch:
            on_batch(state)
    return state


def _switch(target: EmbeddingModel) -> bool:
    """Make `target` the active model in one transaction, if every chunk has its vector."""
    with transaction.atomic():
        # Exclusive: waits for chunk writers to commit and keeps new ones out until done.
        state = EmbeddingState.objects.select_for_update().get(pk=1)
        if state.target_model != target.name:
            return True  # another switch replaced this one; nothing left for us
        if _missing(target.name).exists():
            return False
        with connection.cursor() as cursor:
            # The old model's vectors are overwritten: dropped with the switch.
            cursor.execute(
                "UPDATE library_chunk c SET embedding = e.embedding, embedding_model = e.model "
                "FROM library_chunkembedding e WHERE e.chunk_id = c.id AND e.model = %s",
                [target.name],
            )
        ChunkEmbedding.objects.all().delete()
        # The old model's windows go with its vectors; a search compares only the active
        # model's.
        ChunkWindow.objects.exclude(model=target.name).delete()
        state.active_model, state.active_dimensions = target.name, target.dimensions
        state.target_model, state.target_dimensions = "", None
        state.progress_done = state.progress_total = Chunk.objects.count()
        state.save()
    return True
