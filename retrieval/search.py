"""The search: one SQL statement over the chunks of a notebook's ready sources."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import connection, models, transaction

from library.models import Chunk, Source
from library.vector_indexes import indexed_type
from notebooks.models import Notebook
from providers import local_e5, local_fuse
from retrieval import windows
from sharing.access import searchable_link_sql


@dataclass(frozen=True)
class Hit:
    chunk: Chunk
    similarity: float


# The kinds that restate the uploads and are held to the generated-slot rule: generated
# documents, and notes made sources (measured on manual-qa: docs/retrieval.md).
CAPPED_KINDS: tuple[str, ...] = (Source.Kind.GENERATED.value, Source.Kind.NOTE.value)

# The hits' chunks and their sources come with the ranking, read by the statement itself
# (`{loaded}`): loading them with a second query (in_bulk, with the sources) cost 2.7 ms a
# search, 1.1 of it the query and the rest Django building it (bench/README.md, note 3d).
# Not the chunks' vector and full-text vector: nothing downstream reads them, and parsing
# them would be a good part of the loading; they stay deferred, as `.defer()` leaves them.
_CHUNK_FIELDS = [
    f for f in Chunk._meta.concrete_fields if f.name not in {"embedding", "search_vector"}
]
_SOURCE_FIELDS = list(Source._meta.concrete_fields)
_LOADED = ", ".join(
    [f'lc."{f.column}"' for f in _CHUNK_FIELDS] + [f'ls."{f.column}"' for f in _SOURCE_FIELDS]
)
_LOAD_JOIN = (
    "JOIN library_chunk lc ON lc.id = chosen.id JOIN library_source ls ON ls.id = lc.source_id"
)


def search_notebook(
    *,
    notebook: Notebook,
    query_vector: list[float],
    model: str,
    k: int | None = None,
    floor: float | None = None,
    source_id: int | None = None,
    sources: Sequence[int] | None = None,
    reader: int | None = None,
) -> list[Hit]:
    """The k chunks most similar to the query, at or above the floor, uploads first (then
    at most RETRIEVAL_GENERATED_SLOTS chunks of generated documents and notes), each part
    best first; only those of `source_id` (one of the notebook's sources, uncapped) when
    given, and only those of `sources` (the ones the reader ticked; None: all).

    Only vectors made by `model` are compared: two models' vectors never meet.
    """
    k = k or settings.RETRIEVAL_K
    params = _params(
        notebook=notebook,
        query_vector=query_vector,
        model=model,
        k=k,
        floor=floor,
        source_id=source_id,
        sources=sources,
        reader=reader,
        candidates=k,
        generated_candidates=min(k, settings.RETRIEVAL_GENERATED_SLOTS),
    )
    return _run(_statement(_DENSE_SQL, query_vector), params)


def _statement(sql: str, query_vector: list[float]) -> str:
    """The statement as run: the HNSW branch's expression for vectors of the query's length
    (that of the model's vectors), as its index was built (library/vector_indexes.py), and
    the columns that load the hits."""
    dimensions = len(query_vector)
    kind = indexed_type(dimensions) or "vector"  # none: the branch scans exactly
    return (
        sql.replace("{vtype}", kind)
        .replace("{dims}", str(dimensions))
        .replace("{loaded}", _LOADED)
        .replace("{load_join}", _LOAD_JOIN)
    )


def _params(
    *,
    notebook: Notebook,
    query_vector: list[float],
    model: str,
    k: int,
    floor: float | None,
    source_id: int | None,
    sources: Sequence[int] | None,
    reader: int | None,
    candidates: int,
    generated_candidates: int,
) -> dict[str, Any]:
    return {
        "notebook": notebook.pk,
        # Whose search it is: only the chunks they may read are ranked (sharing/access.py);
        # None: the notebook's owner (benchmarks and tests of the ranking itself).
        "reader": notebook.owner_id if reader is None else reader,
        "source": source_id,  # None: all the notebook's sources
        "chosen": None if sources is None else [int(pk) for pk in sources],  # None: all
        "ready": Source.Status.READY.value,
        "capped_kinds": list(CAPPED_KINDS),
        "model": model,
        "vector": "[" + ",".join(repr(float(value)) for value in query_vector) + "]",
        # Cosine similarity is never below -1, so -2 lets everything through.
        "floor": -2.0 if floor is None else float(floor),
        "k": k,
        "slots": settings.RETRIEVAL_GENERATED_SLOTS,
        "candidates": candidates,
        "generated_candidates": generated_candidates,
        "exact_max": settings.RETRIEVAL_EXACT_MAX_CHUNKS,
    }


# For the ranking statement only: HNSW's iterative scan goes on past ef_search candidates
# until enough rows pass the notebook filter (without it a notebook that is a small part of
# the index gets fewer than k, or none); relaxed_order lets it return them slightly out of
# order, which the statement re-sorts by exact distance. enable_sort off: in the HNSW branch
# the planner would otherwise often prefer the exact plan (read the notebook's chunks, sort
# them), which the size rule already ruled out; every other sort in the statement has no
# alternative and still runs. Local to the transaction: they end with it.
_SEARCH_SETTINGS = (
    "SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true), "
    "set_config('hnsw.ef_search', %(ef_search)s, true), set_config('enable_sort', 'off', true)"
)


def _run(sql: str, params: dict[str, Any]) -> list[Hit]:
    """Run one ranking statement (rows of chunk id and similarity) and load the chunks."""
    params = {**params, "ef_search": str(settings.RETRIEVAL_HNSW_EF_SEARCH)}
    if connection.in_atomic_block:
        # In the caller's transaction: the settings must end with the search, not with that
        # transaction, so they go in a savepoint that is rolled back (the statement only
        # reads), which restores them; a commit would leave enable_sort off after it.
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(_SEARCH_SETTINGS, params)
            cursor.execute(sql, params)
            ranked = cursor.fetchall()
            transaction.set_rollback(True)
    else:
        # Not in a transaction (a request answering a question): both statements go in one
        # message, which PostgreSQL runs as one implicit transaction, so the settings end
        # with it; one round trip instead of four (BEGIN, settings, statement, ROLLBACK),
        # on the way to every answer's first token (bench/README.md, streaming overhead).
        with connection.cursor() as cursor:
            cursor.execute(_SEARCH_SETTINGS + ";\n" + sql, params)
            cursor.nextset()
            ranked = cursor.fetchall()
    return [_hit(row) for row in ranked]


def _from_row(model: type[models.Model], fields: list, values: Sequence[Any]) -> Any:
    """A model instance from its columns as PostgreSQL sent them, converted as Django's
    own queries convert them (a JSONField's text parsed, for one)."""
    converted = []
    for field, value in zip(fields, values, strict=True):
        for converter in field.get_db_converters(connection):
            value = converter(value, field.cached_col, connection)
        converted.append(value)
    return model.from_db(connection.alias, [f.attname for f in fields], converted)


def _hit(row: tuple) -> Hit:
    _, similarity, *values = row
    chunk = _from_row(Chunk, _CHUNK_FIELDS, values[: len(_CHUNK_FIELDS)])
    chunk.source = _from_row(Source, _SOURCE_FIELDS, values[len(_CHUNK_FIELDS) :])
    return Hit(chunk=chunk, similarity=float(similarity))


# The notebook's ready sources (or the one asked about, or those the reader ticked) that
# the reader may search, by the one access rule (sharing/access.py). `capped`: a generated
# document's or a note's (both restate the uploads), held to the generated-slot rule; a
# source asked about alone is never capped.
_SCOPE = """
scope AS MATERIALIZED (
    SELECT s.id, s.search_config, s.chunk_count,
           s.kind = ANY(%(capped_kinds)s::text[]) AND %(source)s::bigint IS NULL AS capped
    FROM library_source s
    JOIN notebooks_notebooksource ns ON ns.source_id = s.id
    WHERE ns.notebook_id = %(notebook)s AND s.status = %(ready)s
      AND (%(source)s::bigint IS NULL OR s.id = %(source)s::bigint)
      AND (%(chosen)s::bigint[] IS NULL OR s.id = ANY(%(chosen)s::bigint[]))
      AND {searchable}
),
""".replace("{searchable}", searchable_link_sql(link="ns", source="s"))
# The nearest chunks of the active model: `candidates` uploads and `generated_candidates`
# chunks of generated documents, by cosine distance.
#
# Exact scan or HNSW: both branches are in the statement, and a one-time filter on the
# notebook's size (the sum of its sources' chunk counts, read from `scope`) runs exactly one
# of them. The HNSW branch orders by `embedding::vector(D) <=> query::vector(D)` and filters
# on the model: the expression and predicate of the model's partial index
# (library/vector_indexes.py), so the planner can use it; the exact branch's plain `<=>` cannot,
# so it reads the notebook's chunks through the (embedding_model, source) index and sorts
# them. The rule, measured with bench/retrieval_latency.py (notebooks of 2k/5k/10k/20k
# chunks inside a table of 1M chunks of 384 dimensions, dense p50): exact 9 / 14 / 17 / 63 ms,
# HNSW 92 / 34 / 23 / 30 ms with recall@8 0.90 / 1.0 / 0.98 / 0.95. The exact scan grows with
# the notebook and never misses; HNSW costs about the same at any size, but in a small
# notebook its iterative scan wades through other notebooks' chunks and misses some. They
# cross between 10k and 20k chunks: RETRIEVAL_EXACT_MAX_CHUNKS is 10,000.
# Generated documents are a few chunks each: always exact.
_DENSE_CANDIDATES = """
uploads_exact AS (
    SELECT c.id, c.embedding <=> %(vector)s::vector AS distance
    FROM library_chunk c
    WHERE c.source_id IN (SELECT id FROM scope WHERE NOT capped)
      AND c.embedding_model = %(model)s AND c.embedding IS NOT NULL
      AND (SELECT coalesce(sum(chunk_count), 0) FROM scope WHERE NOT capped) <= %(exact_max)s
    ORDER BY distance, c.id
    LIMIT %(candidates)s
),
uploads_hnsw AS MATERIALIZED (
    SELECT c.id, c.embedding::{vtype}({dims}) <=> %(vector)s::{vtype}({dims}) AS distance
    FROM library_chunk c
    WHERE c.embedding_model = %(model)s
      AND c.source_id IN (SELECT id FROM scope WHERE NOT capped)
      AND (SELECT coalesce(sum(chunk_count), 0) FROM scope WHERE NOT capped) > %(exact_max)s
    ORDER BY c.embedding::{vtype}({dims}) <=> %(vector)s::{vtype}({dims})
    LIMIT %(candidates)s
),
generated AS (
    SELECT c.id, c.embedding <=> %(vector)s::vector AS distance
    FROM library_chunk c
    WHERE c.source_id IN (SELECT id FROM scope WHERE capped) AND c.embedding_model = %(model)s
      AND c.embedding IS NOT NULL
    ORDER BY distance, c.id
    LIMIT %(generated_candidates)s
),
candidates AS (
    SELECT id, distance, false AS capped FROM uploads_exact
    -- "+ 0": the planner takes the CTE's rows for sorted by distance, but relaxed_order
    -- may return them slightly out of order; this makes it sort them again.
    UNION ALL SELECT id, distance + 0, false FROM uploads_hnsw
    UNION ALL SELECT id, distance, true FROM generated
),
"""
# Uploads fill the slots by similarity; chunks of generated documents (which restate the
# uploads) may take at most `slots` of them, only at or above the floor, and come after the
# uploads, so an original always outranks its paraphrase (DESIGN.md Retrieval).
_DENSE_SQL = (
    "WITH"
    + _SCOPE
    + _DENSE_CANDIDATES.rstrip().rstrip(",")
    + """
SELECT chosen.id, chosen.similarity, {loaded} FROM (
    SELECT id, 1 - distance AS similarity, capped, distance
    FROM candidates
    WHERE 1 - distance >= %(floor)s
    ORDER BY distance, id
    LIMIT %(k)s
) chosen
{load_join}
ORDER BY chosen.capped, chosen.distance, chosen.id
"""
)


@dataclass(frozen=True)
class Fusion:
    """How hybrid ranking merges its two candidate lists (tuned on covid-qa-dev, README).

    `dense_weight` is the dense side's share: of the min-max-normalised scores when
    `method` is "weighted", of the reciprocal ranks when it is "rrf"; None: the model's
    own (DENSE_WEIGHTS). Weighted beat reciprocal rank fusion by 0.04 in recall@8; none of
    ts_rank's length normalisations did better, nor ts_rank_cd.
    """

    method: str = "weighted"
    dense_weight: float | None = None
    # Candidates a side: 30 ranked covid-qa-dev as 50 did (recall@8 0.905 both, MRR@8 0.746
    # against 0.747; 20: 0.902), as did 75-150, and the pool's scoring is most of what a
    # large notebook's search costs beyond its two scans: at 100k chunks 2 / 3 ms less at
    # p50 / p95 than 50 (bench/README.md, note 3d).
    candidates: int = 30
    rrf_k: int = 60
    # False: a chunk that shares words with the question may enter below the dense floor
    # (True measured 0.03 worse in recall@8).
    floor_lexical: bool = False
    # ts_rank (PostgreSQL's, blind to how rare a word is) or idf (see _IDF).
    lexical: str = "ts_rank"
    # Weighted fusion only: added times the share of the question's word pairs (two words
    # next to each other in it) a chunk holds within `proximity_window` positions of each
    # other, in either order. Tuned on covid-qa-dev (README): windows of 3 to 5 and weights
    # of 0.3 to 0.4 within 0.005 of each other; 0 turns it off.
    proximity_weight: float = 0.3
    proximity_window: int = 4
    # A pool chunk's similarity is its closest part's (retrieval/windows.py) where it has
    # parts by the model; None: as RETRIEVAL_WINDOWS says for the model.
    windows: bool | None = None


# The dense side's share in the weighted fusion, per embedding model: the best on
# covid-qa-dev (README, "Retrieval quality"). e5 at 0.4 (0.3 and 0.5 within 0.006 in
# MRR@8); the universal sentence encoder ranks passages less well and gets 0.2 (0.3: 0.008
# worse in recall@8, 0.4: 0.017). Models not measured get e5's former 0.3.
DENSE_WEIGHTS = {local_e5.MODEL_NAME: 0.4, local_fuse.MODEL_NAME: 0.2}
DEFAULT_DENSE_WEIGHT = 0.3


# One statement: dense candidates (cosine, the active model's vectors only) and lexical
# candidates (full text, OR of the question's lexemes) over the notebook's ready sources,
# fused, best first; then the generated-slot rule. The question is parsed and stemmed under
# each text search configuration the notebook's sources were indexed with, so its words
# meet theirs.
_HYBRID_SQL = (
    "WITH"
    + _SCOPE
    + _DENSE_CANDIDATES
    + r"""
dense AS (
    SELECT id, 1 - distance AS similarity, capped
    FROM candidates
    ORDER BY distance, id
    LIMIT %(candidates)s
),
dense_ranked AS (
    SELECT id, similarity, capped, row_number() OVER (ORDER BY similarity DESC, id) AS rank
    FROM dense
    WHERE similarity >= %(floor)s
),
{lexical}lexical_ranked AS (
    SELECT id, capped, score, row_number() OVER (ORDER BY score DESC, id) AS rank
    FROM lexical
),
-- Every candidate, whichever side found it, is scored by both: its cosine similarity and
-- its full-text score (0 when it shares no word with the question). Scoring a side's
-- misses as 0 ranked a chunk just outside one side's top 50 as if it matched nothing.
pool AS (
    SELECT id, capped FROM dense_ranked
    UNION
    SELECT id, capped FROM lexical_ranked
),
-- MATERIALIZED: each pool chunk scored once. Inlined, the fusion below (its min and max
-- over the pool, and the score) made PostgreSQL compute some scores again per reference:
-- the same rankings, an eighth faster (covid-qa-dev with windows 20.3 / 32.9 -> 17.5 / 29.0
-- ms p50 / p95; 100k chunks 1.8-2.7 ms less at p50; statements alternated, bench/README.md).
scored AS MATERIALIZED (
    SELECT p.id, p.capped,
           -- Its closest part's similarity (retrieval/windows.py); a chunk without parts
           -- by the model, its own. (Not the higher of the two: with the chunk's vector
           -- the mean of its parts', that ranked worse, 0.894 / 0.736 against 0.902 /
           -- 0.750 in recall@8 / MRR@8 on covid-qa-dev.)
           coalesce((
               SELECT max(1 - (w.embedding <=> %(vector)s::vector))
               FROM library_chunkwindow w
               WHERE %(windows)s AND w.chunk_id = c.id AND w.model = %(model)s),
               1 - (c.embedding <=> %(vector)s::vector)) AS similarity,
           {pool_lexical} AS lexical,
           -- The share of the question's word pairs (see `word_pairs`) the chunk holds.
           coalesce((
               SELECT avg((c.search_vector @@ wp.query)::int)
               FROM scope
               JOIN word_pairs wp ON wp.config = scope.search_config
               WHERE scope.id = c.source_id), 0) AS proximity
    FROM pool p
    JOIN library_chunk c ON c.id = p.id{pool_join}
),
-- "weighted": both scores min-max-normalised over the pool (full text: divided by its
-- best, its least being 0), summed with the dense side's share `dense_weight`, plus
-- `proximity_weight` times the share of the question's word pairs the chunk holds.
fused AS (
    SELECT s.id, s.capped,
        CASE WHEN %(method)s = 'rrf' THEN
            coalesce(%(dense_weight)s / (%(rrf_k)s + d.rank), 0)
            + coalesce((1 - %(dense_weight)s) / (%(rrf_k)s + l.rank), 0)
        ELSE
            -- A chunk not embedded yet (its source is still being embedded) has no
            -- similarity: it ranks by its words alone.
            CASE WHEN s.similarity IS NULL THEN 0 ELSE %(dense_weight)s * coalesce(
                (s.similarity - min(s.similarity) OVER ())
                / nullif(max(s.similarity) OVER () - min(s.similarity) OVER (), 0), 1) END
            + (1 - %(dense_weight)s)
                * coalesce(s.lexical / nullif(max(s.lexical) OVER (), 0), 0)
            + %(proximity_weight)s * s.proximity
        END AS score
    FROM scored s
    LEFT JOIN dense_ranked d ON d.id = s.id
    LEFT JOIN lexical_ranked l ON l.id = s.id
),
placed AS (
    SELECT id, capped, score,
           row_number() OVER (PARTITION BY capped ORDER BY score DESC, id) AS place
    FROM fused
),
chosen AS (
    SELECT id, capped, score
    FROM placed
    WHERE NOT capped OR place <= %(slots)s
    ORDER BY score DESC, id
    LIMIT %(k)s
)
SELECT chosen.id, coalesce(1 - (lc.embedding <=> %(vector)s::vector), 0) AS similarity, {loaded}
FROM chosen
{load_join}
ORDER BY chosen.capped, chosen.score DESC, chosen.id
"""
)


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
-- The question's word pairs: each two lexemes next to each other in it once stop words are
-- dropped, as one query that matches a chunk holding both within `proximity_window`
-- positions, in either order ("rate of infection" meets "infection rates" and "rates of new
-- infections"). The share of them a chunk holds lifts it in the fusion: a chunk that says
-- what the question says beats one that merely holds its words here and there.
question_positions AS (
    SELECT configs.config, w.lexeme, p.position,
           ('''' || replace(replace(w.lexeme, '\', '\\'), '''', '''''') || '''')::tsquery AS query
    FROM (SELECT DISTINCT search_config AS config FROM scope) AS configs,
         unnest(to_tsvector(configs.config::regconfig, %(question)s)) AS w,
         unnest(w.positions) AS p(position)
),
neighbours AS (
    SELECT config, position, lexeme, query,
           lead(lexeme) OVER question_order AS next_lexeme,
           lead(query) OVER question_order AS next_query
    FROM question_positions
    WINDOW question_order AS (PARTITION BY config ORDER BY position, lexeme)
),
word_pairs AS (
    SELECT n.config,
           string_agg('(' || tsquery_phrase(o.first, o.second, d.distance)::text || ')', ' | ')
               ::tsquery AS query
    FROM neighbours n
    CROSS JOIN generate_series(1, %(proximity_window)s) AS d(distance)
    CROSS JOIN LATERAL (VALUES (n.query, n.next_query), (n.next_query, n.query))
        AS o(first, second)
    WHERE n.next_lexeme <> n.lexeme
    GROUP BY n.config, n.position, n.lexeme
),
bounded AS MATERIALIZED (
    SELECT coalesce(sum(chunk_count), 0) AS chunks,
           coalesce(sum(chunk_count), 0) > %(exact_max)s AS large
    FROM scope
),
-- The share of all chunks holding each of the commonest lexemes (ANALYZE's sample, kept by
-- PostgreSQL in pg_stats: nothing to maintain); read only for a large notebook.
lexeme_stats AS MATERIALIZED (
    SELECT e.lexeme, e.frequency
    FROM pg_stats s,
         unnest(s.most_common_elems::text::text[], s.most_common_elem_freqs)
             AS e(lexeme, frequency)
    WHERE s.schemaname = current_schema() AND s.tablename = 'library_chunk'
      AND s.attname = 'search_vector' AND (SELECT large FROM bounded)
      AND e.lexeme IS NOT NULL
),
-- Large notebook: match on the question's rarest lexemes only, as many as together are
-- expected in at most `lexical_budget` of its chunks (always the rarest one); a lexeme not
-- among the commonest counts half the least listed share, as the planner counts it.
chosen_terms AS (
    SELECT config, lexeme, query,
           NOT (SELECT large FROM bounded) OR place = 1 OR expected <= %(lexical_budget)s
               AS chosen
    FROM (
        SELECT t.config, t.lexeme, t.query,
               row_number() OVER w AS place,
               sum(coalesce(s.frequency,
                            (SELECT min(frequency) / 2 FROM lexeme_stats), 0)) OVER w
                   * (SELECT chunks FROM bounded) AS expected
        FROM terms t
        LEFT JOIN lexeme_stats s ON s.lexeme = t.lexeme
        WINDOW w AS (PARTITION BY t.config
                     ORDER BY coalesce(s.frequency, 0), t.lexeme ROWS UNBOUNDED PRECEDING)
    ) ranked
),
-- `query`: every lexeme, to score with; `match_query`: the chosen ones, to find chunks with.
queries AS (
    SELECT config, string_agg(query::text, ' | ')::tsquery AS query,
           (string_agg(query::text, ' | ') FILTER (WHERE chosen))::tsquery AS match_query
    FROM chosen_terms GROUP BY config
),
-- A large notebook (more than `exact_max` chunks) is matched per configuration through the
-- model's full-text index (LATERAL ... OFFSET 0: left to itself the planner walked every
-- source's chunks testing each, ten times as slow); the filter on the model is that partial
-- index's predicate (library/vector_indexes.py): without it no index serves. A step of its
-- own, before the matches meet the notebook's sources: in one step with them the planner
-- may put the sources outside and run the index scan again for each (90 times over for the
-- bench's 90k-chunk notebook, 28 of the search's 42 ms; bench/README.md, note 3d).
index_matches AS MATERIALIZED (
    SELECT c.id, c.source_id, c.search_vector, c.embedding, q.config, q.query
    FROM queries q
    CROSS JOIN LATERAL (
        SELECT c.id, c.source_id, c.search_vector, c.embedding
        FROM library_chunk c
        WHERE c.embedding_model = %(model)s AND c.search_vector @@ q.match_query
        OFFSET 0
    ) c
    WHERE (SELECT large FROM bounded)
),
-- The notebook's chunks holding a chosen lexeme. A notebook searched exactly (at most
-- `exact_max` chunks) is matched in one bitmap scan: the model's full-text index ANDed with
-- the source index on the array of the notebook's sources, so only its own matches are read
-- from the table. Joined to `scope` row by row instead, the planner ran the full-text index
-- once per source and read every match of the model each time; testing each of the
-- notebook's chunks instead decompresses every full-text vector (bench/README.md, note 3f).
-- Matching through the index alone would read the matches of every notebook of every user,
-- a cost that grows with the library (a 10,000-chunk notebook in a library of 100,000: 215
-- ms at p50). A larger one keeps those of the index's matches that are its own. The
-- one-time filter on the notebook's size runs exactly one of the two branches.
notebook_matches AS MATERIALIZED (
    SELECT c.id, c.source_id, c.search_vector, c.embedding, q.config, q.query
    FROM queries q
    CROSS JOIN LATERAL (
        SELECT c.id, c.source_id, c.search_vector, c.embedding
        FROM library_chunk c
        WHERE c.embedding_model = %(model)s AND c.search_vector @@ q.match_query
          AND c.source_id = ANY((SELECT array_agg(id) FROM scope)::bigint[])
        OFFSET 0
    ) c
    WHERE NOT (SELECT large FROM bounded)
),
all_matches AS MATERIALIZED (
    SELECT m.id, m.capped, m.search_vector, m.config, m.query
    FROM (
        SELECT m.id, scope.capped, m.search_vector, m.config, m.query, m.embedding
        FROM notebook_matches m
        JOIN scope ON scope.id = m.source_id AND scope.search_config = m.config
        UNION ALL
        SELECT m.id, scope.capped, m.search_vector, m.config, m.query, m.embedding
        FROM index_matches m
        JOIN scope ON scope.id = m.source_id AND scope.search_config = m.config
        WHERE (SELECT large FROM bounded)
    ) m
    WHERE NOT (%(floor_lexical)s OR m.capped)
          OR 1 - (m.embedding <=> %(vector)s::vector) >= %(floor)s
),
-- A large notebook's matches are also cut at `lexical_cap` (in no particular order): the
-- statistics are the whole table's and may underestimate a lexeme in this notebook. The
-- cut is here, not in `all_matches`: a LIMIT there made the planner walk the notebook's
-- chunks testing each (0.3 s) instead of reading the full-text index; a CTE is planned for
-- all its rows, yet read only as far as the LIMIT asks.
matches AS (
    SELECT * FROM all_matches
    LIMIT CASE WHEN (SELECT large FROM bounded) THEN %(lexical_cap)s END
),
"""
# `lexical_all`: every matching chunk's score; `lexical`: the best `candidates` of them.
_TS_RANK = """
lexical_all AS (
    SELECT id, capped, ts_rank(search_vector, query) AS score FROM matches
),
lexical AS (
    SELECT id, capped, score FROM lexical_all ORDER BY score DESC, id LIMIT %(candidates)s
),
"""
# Each question lexeme a chunk contains scores its ts_rank alone (which grows with the
# lexeme's count in the chunk and saturates) times the lexeme's inverse document frequency
# in the notebook (BM25's idf), so a rare word of the question counts for more than a common
# one; PostgreSQL's ts_rank cannot tell them apart. Unnesting the chunks' vectors to get
# BM25's exact term frequencies cost ten times as much.
_IDF = """
pairs AS MATERIALIZED (
    SELECT m.id, m.capped, t.config, t.lexeme, ts_rank(m.search_vector, t.query) AS rank
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
lexical_all AS (
    SELECT p.id, p.capped,
           sum(ln(1 + (stats.n - f.df + 0.5) / (f.df + 0.5)) * p.rank) AS score
    FROM pairs p
    JOIN frequencies f ON f.config = p.config AND f.lexeme = p.lexeme
    CROSS JOIN stats
    GROUP BY p.id, p.capped
),
lexical AS (
    SELECT id, capped, score FROM lexical_all ORDER BY score DESC, id LIMIT %(candidates)s
),
"""
# Each pool chunk's full-text score: ts_rank against all the question's lexemes, computed for
# the pool alone (at most 2 x candidates chunks), so a large notebook's chunk that the
# lexical side did not match on (it lacks the rarer lexemes) or did not reach (the cap)
# scores as it would among all the matches. Equal to lexical_all's score where both exist;
# looking that up instead, a nested loop over up to lexical_cap rows, cost 20 ms at 100k.
# (Not through `queries`: a second reference makes it a materialized CTE whose row estimate
# turned `all_matches` into a walk through the notebook's chunks.)
_POOL_TS_RANK = """coalesce((
               SELECT ts_rank(c.search_vector, q.query)
               FROM scope
               JOIN (SELECT config, string_agg(query::text, ' | ')::tsquery AS query
                     FROM terms GROUP BY config) q ON q.config = scope.search_config
               WHERE scope.id = c.source_id AND c.search_vector @@ q.query), 0)"""
HYBRID_SQL = {
    "ts_rank": _HYBRID_SQL.replace("{lexical}", _TERMS + _TS_RANK)
    .replace("{pool_lexical}", _POOL_TS_RANK)
    .replace("{pool_join}", ""),
    # idf's frequencies are counted among the matches, so in a large notebook (matched on
    # the rarer lexemes) they are lower than the notebook's for its common lexemes.
    "idf": _HYBRID_SQL.replace("{lexical}", _TERMS + _IDF)
    .replace("{pool_lexical}", "coalesce(a.score, 0)")
    .replace("{pool_join}", "\n    LEFT JOIN lexical_all a ON a.id = p.id"),
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
    sources: Sequence[int] | None = None,
    reader: int | None = None,
) -> list[Hit]:
    """The k best chunks by dense and full-text ranking fused, in one SQL statement.

    The floor applies to dense candidates (and to lexical ones when `fusion.floor_lexical`,
    and always to generated documents' chunks); each hit carries its cosine similarity,
    whichever side found it. The generated-slot rule is search_notebook's.
    """
    fusion = fusion or Fusion()
    use_windows = windows.enabled_for(model) if fusion.windows is None else fusion.windows
    k = k or settings.RETRIEVAL_K
    params = _params(
        notebook=notebook,
        query_vector=query_vector,
        model=model,
        k=k,
        floor=floor,
        source_id=source_id,
        sources=sources,
        reader=reader,
        candidates=fusion.candidates,
        generated_candidates=fusion.candidates,
    )
    params.update(
        question=question,
        method=fusion.method,
        windows=use_windows,
        dense_weight=float(
            (windows.DENSE_WEIGHTS if use_windows else DENSE_WEIGHTS).get(
                model, DEFAULT_DENSE_WEIGHT
            )
            if fusion.dense_weight is None
            else fusion.dense_weight
        ),
        rrf_k=float(fusion.rrf_k),
        proximity_weight=float(fusion.proximity_weight),
        proximity_window=int(fusion.proximity_window),
        floor_lexical=fusion.floor_lexical,
        lexical_budget=settings.RETRIEVAL_LEXICAL_BUDGET,
        lexical_cap=settings.RETRIEVAL_LEXICAL_CAP,
    )
    return _run(_statement(HYBRID_SQL[fusion.lexical], query_vector), params)
