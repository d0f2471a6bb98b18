"""How close the question is in meaning to each part of each passage the search found.

Hybrid search already compares the question with every part (window) of a pool chunk and
keeps the closest (retrieval/windows.py); the offline answer (generation/extractive/)
wants them all, to prefer the sentences of the part that says what the question asks
rather than those that merely share its words. Read back in one statement, with no
embedding call: the parts' vectors are stored.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from django.db import connection

from retrieval.search import Hit, vector_literal

_PARTS_SQL = """
SELECT w.chunk_id, 1 - (w.embedding <=> %(vector)s::vector)
FROM library_chunkwindow w
WHERE w.chunk_id = ANY(%(hits)s) AND w.model = %(model)s
ORDER BY w.chunk_id, w.ordinal
"""


def part_closeness(
    *, hits: Sequence[Hit], query_vector: list[float], model: str
) -> list[tuple[float, ...]]:
    """For each hit, the question's similarity to each of its chunk's parts by `model` in
    order, or to the chunk as a whole (its hit similarity) when it has no parts."""
    if not hits:
        return []
    params: dict[str, Any] = {
        "hits": [hit.chunk.pk for hit in hits],
        "model": model,
        "vector": vector_literal(query_vector),
    }
    parts: dict[int, list[float]] = defaultdict(list)
    with connection.cursor() as cursor:
        cursor.execute(_PARTS_SQL, params)
        for chunk_id, similarity in cursor.fetchall():
            parts[chunk_id].append(float(similarity))
    return [tuple(parts.get(hit.chunk.pk) or (hit.similarity,)) for hit in hits]
