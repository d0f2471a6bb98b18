"""The search: one SQL statement over the chunks of a notebook's ready sources, written out
and run by retrieval/statements.py."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.conf import settings
from django.db import connection, transaction

from library.models import Chunk, Source
from library.vector_indexes import index_name
from notebooks.models import Notebook
from retrieval import profiles, windows
from retrieval.statements import (
    DENSE_SQL,
    HYBRID_SQL,
    SEARCH_SETTINGS_SQL,
    SPREAD_SQL,
    loaded_chunks,
    prepared_cursor,
    rendered,
)


@dataclass(frozen=True)
class Hit:
    chunk: Chunk
    similarity: float


# The kinds that restate the uploads and are held to the generated-slot rule: generated
# documents, and notes made sources (measured on manual-qa: docs/retrieval.md).
CAPPED_KINDS: tuple[str, ...] = (Source.Kind.GENERATED.value, Source.Kind.NOTE.value)


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
        floor=floor,
        source_id=source_id,
        sources=sources,
        reader=reader,
    )
    constants = dense_constants(model=model, dimensions=len(query_vector), k=k)
    return _run(DENSE_SQL, params, dimensions=len(query_vector), constants=constants)


def spread_over_source(
    *, source_id: int, query_vector: list[float], model: str, parts: int
) -> list[Hit]:
    """At most `parts` chunks of one source, in reading order: the one most similar to the
    query in each of `parts` consecutive stretches of it (spread.sql). No floor."""
    statement = rendered(SPREAD_SQL, len(query_vector), (("model", model),))
    params: dict[str, Any] = {
        "parts": parts,
        "vector": vector_literal(query_vector),
        "source": source_id,
    }
    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        return _hits(cursor.fetchall())


def vector_literal(values: Sequence[float]) -> str:
    """The question's vector as pgvector's text input. pgvector keeps single precision, so
    each value is rounded to it once here and written in the 9 significant digits that give
    that float back exactly: the same vector as the shortest double repr(), in about half
    the characters (the statements carry it several times) and half the time to format."""
    single = np.asarray(values, dtype=np.float32).tolist()
    # The % form: a third faster than an f-string over 384 values.
    return "[" + ",".join(["%.9g" % value for value in single]) + "]"  # noqa: UP031


def _params(
    *,
    notebook: Notebook,
    query_vector: list[float],
    floor: float | None,
    source_id: int | None,
    sources: Sequence[int] | None,
    reader: int | None,
) -> dict[str, Any]:
    """The question's own values, bound as the statement's parameters."""
    return {
        **scope_params(notebook=notebook, source_id=source_id, sources=sources, reader=reader),
        "vector": vector_literal(query_vector),
        # Cosine similarity is never below -1, so -2 lets everything through.
        "floor": -2.0 if floor is None else float(floor),
    }


def scope_params(
    *,
    notebook: Notebook,
    source_id: int | None = None,
    sources: Sequence[int] | None = None,
    reader: int | None = None,
) -> dict[str, Any]:
    """The parameters of the search's scope (retrieval/sql/scope.sql): which of the
    notebook's sources it reads, for the search and for what judges its hits
    (retrieval/coverage.py)."""
    return {
        "notebook": notebook.pk,
        # Whose search it is: only the chunks they may read are ranked (sharing/access.py);
        # None: the notebook's owner (benchmarks and tests of the ranking itself).
        "reader": notebook.owner_id if reader is None else reader,
        "source": source_id,  # None: all the notebook's sources
        "chosen": None if sources is None else [int(pk) for pk in sources],  # None: all
    }


def _constants(
    *, model: str, dimensions: int, k: int, candidates: int, generated_candidates: int
) -> dict[str, Any]:
    """What every search of `model` under these settings shares, written into the statement
    (`render`): the model itself, without which no plan made once could use its partial
    indexes, and the limits and rules."""
    return {
        "model": model,
        "ready": Source.Status.READY.value,
        "capped_kinds": CAPPED_KINDS,
        "k": k,
        "slots": settings.RETRIEVAL_GENERATED_SLOTS,
        "candidates": candidates,
        "generated_candidates": generated_candidates,
        "exact_max": settings.RETRIEVAL_EXACT_MAX_CHUNKS,
        "index_min_chunks": INDEX_MIN_CHUNKS,
        "index_min_share": INDEX_MIN_SHARE,
        "hnsw_index": index_name(model=model, dimensions=dimensions),
    }


# A notebook of at most RETRIEVAL_EXACT_MAX_CHUNKS chunks still has its vectors ranked
# through the model's HNSW index when it holds at least INDEX_MIN_CHUNKS chunks and at least
# INDEX_MIN_SHARE of the index's rows (the statements' `dense_path`): there the index found
# the same top 8 in a fraction of the exact scan's time; a smaller notebook, or a smaller
# share of a large library, is as fast or faster exactly and loses neighbours through the
# index (docs/decisions.md, "Speed"); its full text is matched through the model's full-text
# index on its rarest words by the same rule (hybrid.sql, `bounded`). A hybrid
# search compared from the notebook's centre (the model's profile, `centred`) keeps the exact
# vector scan up to RETRIEVAL_EXACT_MAX_CHUNKS: the index only knows distances from the origin.
INDEX_MIN_CHUNKS = 4_000
INDEX_MIN_SHARE = 0.03

# The largest HNSW index (in rows, every notebook's chunks of the model) that searches with
# SMALL_INDEX_EF_SEARCH candidates instead of RETRIEVAL_HNSW_EF_SEARCH: up to it the fewer
# candidates find the same neighbours in less time; at a million they miss some; between
# the two it is not measured (docs/decisions.md, "Speed").
SMALL_INDEX_ROWS = 120_000
SMALL_INDEX_EF_SEARCH = 100


def _run(
    sql: str, params: dict[str, Any], *, dimensions: int, constants: dict[str, Any]
) -> list[Hit]:
    """Run one ranking statement (rows of chunk id and similarity) and load the chunks.

    The statement and its planner settings are prepared statements of the connection: the
    first search of a model on a connection plans them, every later one binds its values to
    the plan already made (the settings ask for that plan, `plan_cache_mode`), which holds
    every branch (exact or HNSW, whole or bounded full text) for the notebook's size to pick
    from as it runs. Planned again for every question, the planning costs more than the
    search itself in a notebook of a thousand chunks (docs/decisions.md, "Speed").
    """
    settings_sql = rendered(
        SEARCH_SETTINGS_SQL,
        dimensions,
        (
            ("hnsw_index", constants["hnsw_index"]),
            ("ef_search", settings.RETRIEVAL_HNSW_EF_SEARCH),
            ("small_index", SMALL_INDEX_ROWS),
            ("small_index_ef_search", SMALL_INDEX_EF_SEARCH),
        ),
    )
    statement = rendered(sql, dimensions, tuple(constants.items()))
    with prepared_cursor() as planner, prepared_cursor() as cursor:
        if connection.in_atomic_block:
            # In the caller's transaction: the settings must end with the search, not with
            # that transaction, so they go in a savepoint that is rolled back (the statement
            # only reads), which restores them; a commit would leave enable_sort off after it.
            with transaction.atomic():
                planner.execute(settings_sql)
                cursor.execute(statement, params)
                ranked = cursor.fetchall()
                transaction.set_rollback(True)
        else:
            # Not in a transaction (a request answering a question): both statements go in
            # one pipeline, which PostgreSQL runs as one implicit transaction (its end, the
            # pipeline's sync, ends the settings); one round trip instead of four (BEGIN,
            # settings, statement, ROLLBACK), on the way to every answer's first token.
            with connection.wrap_database_errors, connection.connection.pipeline():
                planner.execute(settings_sql)
                cursor.execute(statement, params)
            ranked = cursor.fetchall()
    return _hits(ranked)


def _hits(rows: Sequence[tuple]) -> list[Hit]:
    return [Hit(chunk=chunk, similarity=similarity) for chunk, similarity in loaded_chunks(rows)]


# The full-text side ranks its matches by BM25 (retrieval/sql/hybrid.sql, loupe_bm25):
# BM25_K1 is its k1, the usual 1.2 (how soon a word's repeats stop counting), with no length
# normalisation (b = 0: chunks are windows of about one length). Every match is first ranked
# by its words' ts_rank times their idf, and the RESCORED best by it by BM25 itself: the
# bench's notebooks found their exact BM25 best among them every time, in a third of the
# time. A large notebook's full-text side matches on the question's rarest words expected in
# at most LEXICAL_SHARE of its chunks, at least LEXICAL_BUDGET, at most LEXICAL_MOST: a
# fixed budget is a smaller share of a larger notebook, which would drop more of the
# question's words there and rank further from the exact path; the ceiling holds a large
# notebook's search time (bench/README.md).
BM25_K1 = 1.2
RESCORED = 100
LEXICAL_BUDGET = 1_000
LEXICAL_SHARE = 0.1
LEXICAL_MOST = 4_000
# A large notebook's full-text side reads at most MATCHED_MOST of those matches, the chunks
# holding every word of the question first (hybrid.sql, `index_matches`): each match costs a
# read of its row, and where all of a question's words are common a million chunks held tens
# of thousands of matches. Above any notebook's matches at 100k chunks in the bench, so up to
# there nothing changes; at a million it bounds the search (docs/decisions.md).
MATCHED_MOST = 16_000

# A notebook of fewer embedded chunks is compared from the origin, not from their mean: a
# few chunks are no collection whose common direction says nothing, and a lone chunk is
# its own mean, with no direction from it.
CENTRE_MIN_CHUNKS = 20
# The centre is the mean of at most about this many of the notebook's chunks (every n-th by
# id): a mean costs per vector, and this sample ranked manual-qa and covid-qa-dev as the
# whole notebook's mean did (docs/retrieval.md).
CENTRE_SAMPLE = 250


@dataclass(frozen=True)
class Fusion:
    """How hybrid ranking merges its two candidate lists: the dense side's share of the
    min-max-normalised scores (None: the model's profile's, retrieval/profiles.py), the
    candidates a side, the word-pair bonus, and windows. The defaults are what covid-qa-dev
    ranked best with (docs/retrieval.md, which also has what lost).
    """

    dense_weight: float | None = None
    # Candidates a side: 30 ranked covid-qa-dev as well as more did, and the pool's scoring
    # is most of what a large notebook's search costs beyond its two scans.
    candidates: int = 30
    # Added times the share of the question's word pairs (two words next to each other in
    # it) a chunk holds within `proximity_window` positions of each other, in either order;
    # 0 turns it off.
    proximity_weight: float = 0.3
    proximity_window: int = 4
    # A pool chunk's similarity is its closest part's (retrieval/windows.py) where it has
    # parts by the model; None: as RETRIEVAL_WINDOWS says for the model.
    windows: bool | None = None
    # Chunks compared with the question from the mean of the notebook's chunks, and how
    # many of those closest in meaning have a place among the k whatever their fused score
    # (retrieval/sql/hybrid.sql, `centre` and `chosen`); None: the model's profile's.
    centred: bool | None = None
    dense_places: int | None = None


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

    The floor applies to dense candidates and to generated documents' chunks (a chunk that
    shares words with the question may enter below it); each hit carries its cosine
    similarity, whichever side found it. The generated-slot rule is search_notebook's.
    """
    fusion = fusion or Fusion()
    k = k or settings.RETRIEVAL_K
    params = _params(
        notebook=notebook,
        query_vector=query_vector,
        floor=floor,
        source_id=source_id,
        sources=sources,
        reader=reader,
    )
    params["question"] = question
    constants = hybrid_constants(model=model, dimensions=len(query_vector), k=k, fusion=fusion)
    return _run(HYBRID_SQL, params, dimensions=len(query_vector), constants=constants)


def dense_constants(*, model: str, dimensions: int, k: int) -> dict[str, Any]:
    """What the dense statement has written in for `model`'s searches of k hits."""
    return _constants(
        model=model,
        dimensions=dimensions,
        k=k,
        candidates=k,
        generated_candidates=min(k, settings.RETRIEVAL_GENERATED_SLOTS),
    )


def hybrid_constants(*, model: str, dimensions: int, k: int, fusion: Fusion) -> dict[str, Any]:
    """What the hybrid statement has written in for `model`'s searches of k hits."""
    use_windows = windows.enabled_for(model) if fusion.windows is None else fusion.windows
    profile = profiles.profile(model)
    return {
        **_constants(
            model=model,
            dimensions=dimensions,
            k=k,
            candidates=fusion.candidates,
            generated_candidates=fusion.candidates,
        ),
        "windows": use_windows,
        "dense_weight": float(
            _dense_weight(model, use_windows=use_windows)
            if fusion.dense_weight is None
            else fusion.dense_weight
        ),
        "proximity_weight": float(fusion.proximity_weight),
        "proximity_window": int(fusion.proximity_window),
        "bm25_k1": BM25_K1,
        "rescored": RESCORED,
        "lexical_budget": LEXICAL_BUDGET,
        "lexical_share": LEXICAL_SHARE,
        "lexical_most": LEXICAL_MOST,
        "matched_most": MATCHED_MOST,
        "centred": profile.centred if fusion.centred is None else fusion.centred,
        "centre_min_chunks": CENTRE_MIN_CHUNKS,
        "centre_sample": CENTRE_SAMPLE,
        "dense_places": int(
            profile.dense_places if fusion.dense_places is None else fusion.dense_places
        ),
    }


def _dense_weight(model: str, *, use_windows: bool) -> float:
    """The dense side's share for `model`, whose chunks are scored by their parts or not."""
    profile = profiles.profile(model)
    return profile.windowed_dense_weight if use_windows else profile.dense_weight
