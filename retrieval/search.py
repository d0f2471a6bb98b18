"""The search: one SQL statement over the chunks of a notebook's ready sources."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.db.models import FloatField
from django.db.models.functions import Cast
from pgvector.django import CosineDistance

from library.models import Chunk, Source
from notebooks.models import Notebook


@dataclass(frozen=True)
class Hit:
    chunk: Chunk
    similarity: float


def search_notebook(
    *,
    notebook: Notebook,
    query_vector: list[float],
    model: str,
    k: int | None = None,
    floor: float | None = None,
) -> list[Hit]:
    """The k chunks most similar to the query, best first, at or above the floor.

    Only vectors made by `model` are compared: two models' vectors never meet.
    """
    k = k or settings.RETRIEVAL_K
    chunks = (
        Chunk.objects.filter(
            source__notebooksource__notebook=notebook,
            source__status=Source.Status.READY,
            embedding_model=model,
        )
        .select_related("source")
        .annotate(similarity=Cast(1 - CosineDistance("embedding", query_vector), FloatField()))
        .order_by(CosineDistance("embedding", query_vector), "id")
    )
    if floor is not None:
        chunks = chunks.filter(similarity__gte=floor)
    return [Hit(chunk=chunk, similarity=chunk.similarity) for chunk in chunks[:k]]
