"""The search: one SQL statement over the chunks of a notebook's ready sources."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import connection
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
    source_id: int | None = None,
) -> list[Hit]:
    """The k chunks most similar to the query, best first, at or above the floor; only
    those of `source_id` (one of the notebook's sources) when given.

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
    if source_id is not None:
        chunks = chunks.filter(source_id=source_id)
    return [Hit(chunk=chunk, similarity=chunk.similarity) for chunk in chunks[:k]]


@dataclass(frozen=True)
class Fusion:
    """How hybrid ranking merges its two candidate lists (tuned on covid-qa-dev, README).

    `dense_weight` is the dense side's share: of the min-max-normalised scores when
    `method` is "weighted", of the reciprocal ranks when it is "rrf". Measured with the
    local e5 model: weighted at 0.3 beat 0, 0.2, 0.4, 0.5 and 0.7, and reciprocal rank
    fusion by 0.04 in recall@8; 100 candidates a side did no better than 50, nor did any
    of ts_rank's length normalisations.
    """

    method: str = "weighted"
    dense_weight: float = 0.3
    candidates: int = 50
    rrf_k: int = 60
    # False: a chunk that shares words with the question may enter below the dense floor
    # (True measured 0.03 worse in recall@8).
    floor_lexical: bool = False
    # ts_rank (PostgreSQL's, blind to how rare a word is) or idf (see _IDF).
    lexical: str = "ts_rank"


# One statement: dense candidates (cosine, the active model's vectors only) and lexical
# candidates (full text, OR of the question's lexemes) over the notebook's ready sources,
# fused, best first. The question is parsed and stemmed under each text search
# configuration the notebook's sources were indexed with, so its words meet theirs.
_HYBRID_SQL = r"""
WITH scope AS MATERIALIZED (
    SELECT s.id, s.search_config
    FROM library_source s
    JOIN notebooks_notebooksource ns ON ns.source_id = s.id
    WHERE ns.notebook_id = %(notebook)s AND s.status = %(ready)s
      AND (%(source)s::bigint IS NULL OR s.id = %(source)s::bigint)
),
dense AS (
    SELECT c.id, 1 - (c.embedding <=> %(vector)s::vector) AS similarity
    FROM library_chunk c
    WHERE c.source_id IN (SELECT id FROM scope) AND c.embedding_model = %(model)s
    ORDER BY c.embedding <=> %(vector)s::vector, c.id
    LIMIT %(candidates)s
),
dense_ranked AS (
    SELECT id, similarity, row_number() OVER (ORDER BY similarity DESC, id) AS rank,
           min(similarity) OVER () AS low, max(similarity) OVER () AS high
    FROM dense
    WHERE similarity >= %(floor)s
),
{lexical}lexical_ranked AS (
    SELECT id, score, row_number() OVER (ORDER BY score DESC, id) AS rank,
           max(score) OVER () AS high
    FROM lexical
),
fused AS (
    SELECT coalesce(d.id, l.id) AS id,
        CASE WHEN %(method)s = 'rrf' THEN
            coalesce(%(dense_weight)s / (%(rrf_k)s + d.rank), 0)
            + coalesce((1 - %(dense_weight)s) / (%(rrf_k)s + l.rank), 0)
        ELSE
            %(dense_weight)s
                * CASE WHEN d.id IS NULL THEN 0
                       ELSE coalesce((d.similarity - d.low) / nullif(d.high - d.low, 0), 1) END
            + (1 - %(dense_weight)s) * coalesce(l.score / nullif(l.high, 0), 0)
        END AS score
    FROM dense_ranked d
    FULL JOIN lexical_ranked l ON l.id = d.id
)
SELECT fused.id, 1 - (c.embedding <=> %(vector)s::vector) AS similarity
FROM fused
JOIN library_chunk c ON c.id = fused.id
ORDER BY fused.score DESC, fused.id
LIMIT %(k)s
"""


# The question's lexemes, parsed and stemmed under each configuration the notebook's sources
# use; quoted for tsquery input (no second normalisation), OR-ed: an AND finds nothing for
# most questions.
_TERMS = r"""
terms AS (
    SELECT configs.config, lexeme,
           ('''' || replace(replace(lexeme, '\', '\\'), '''', '''''') || '''')::tsquery AS query
    FROM (SELECT DISTINCT search_config AS config FROM scope) AS configs,
         unnest(tsvector_to_array(to_tsvector(configs.config::regconfig, %(question)s)))
             AS lexeme
),
queries AS (
    SELECT config, string_agg(query::text, ' | ')::tsquery AS query
    FROM terms GROUP BY config
),
matches AS (
    SELECT c.id, c.search_vector, q.config, q.query
    FROM library_chunk c
    JOIN scope ON scope.id = c.source_id
    JOIN queries q ON q.config = scope.search_config
    WHERE c.embedding_model = %(model)s AND c.search_vector @@ q.query
      AND (NOT %(floor_lexical)s OR 1 - (c.embedding <=> %(vector)s::vector) >= %(floor)s)
),
"""
_TS_RANK = """
lexical AS (
    SELECT id, ts_rank(search_vector, query) AS score
    FROM matches
    ORDER BY score DESC, id
    LIMIT %(candidates)s
),
"""
# Each question lexeme a chunk contains scores its ts_rank alone (which grows with the
# lexeme's count in the chunk and saturates) times the lexeme's inverse document frequency
# in the notebook (BM25's idf), so a rare word of the question counts for more than a common
# one; PostgreSQL's ts_rank cannot tell them apart. Unnesting the chunks' vectors to get
# BM25's exact term frequencies cost ten times as much.
_IDF = """
pairs AS MATERIALIZED (
    SELECT m.id, t.config, t.lexeme, ts_rank(m.search_vector, t.query) AS rank
    FROM matches m
    JOIN terms t ON t.config = m.config AND m.search_vector @@ t.query
),
frequencies AS (
    SELECT config, lexeme, count(*) AS df FROM pairs GROUP BY config, lexeme
),
stats AS MATERIALIZED (
    SELECT count(*) AS n
    FROM library_chunk c
    WHERE c.source_id IN (SELECT id FROM scope) AND c.embedding_model = %(model)s
),
lexical AS (
    SELECT p.id, sum(ln(1 + (stats.n - f.df + 0.5) / (f.df + 0.5)) * p.rank) AS score
    FROM pairs p
    JOIN frequencies f ON f.config = p.config AND f.lexeme = p.lexeme
    CROSS JOIN stats
    GROUP BY p.id
    ORDER BY score DESC, p.id
    LIMIT %(candidates)s
),
"""
HYBRID_SQL = {
    "ts_rank": _HYBRID_SQL.replace("{lexical}", _TERMS + _TS_RANK),
    "idf": _HYBRID_SQL.replace("{lexical}", _TERMS + _IDF),
}


def search_notebook_hybrid(
    *,
    notebook: Notebook,
    question: str,
    query_vector: list[float],
    model: str,
    k: int | None = None,
    floor: float | None = None,
    fusion: Fusion | None = None,
    source_id: int | None = None,
) -> list[Hit]:
    """The k best chunks by dense and full-text ranking fused, in one SQL statement.

    The floor applies to dense candidates (and to lexical ones when `fusion.floor_lexical`);
    each hit carries its cosine similarity, whichever side found it.
    """
    fusion = fusion or Fusion()
    params: dict[str, Any] = {
        "notebook": notebook.pk,
        "source": source_id,  # None: all the notebook's sources
        "ready": Source.Status.READY.value,
        "model": model,
        "vector": "[" + ",".join(repr(float(value)) for value in query_vector) + "]",
        "question": question,
        # Cosine similarity is never below -1, so -2 lets everything through.
        "floor": -2.0 if floor is None else float(floor),
        "k": k or settings.RETRIEVAL_K,
        "candidates": fusion.candidates,
        "method": fusion.method,
        "dense_weight": float(fusion.dense_weight),
        "rrf_k": float(fusion.rrf_k),
        "floor_lexical": fusion.floor_lexical,
    }
    with connection.cursor() as cursor:
        cursor.execute(HYBRID_SQL[fusion.lexical], params)
        ranked = cursor.fetchall()
    chunks = Chunk.objects.select_related("source").in_bulk([chunk_id for chunk_id, _ in ranked])
    return [Hit(chunk=chunks[chunk_id], similarity=float(sim)) for chunk_id, sim in ranked]
