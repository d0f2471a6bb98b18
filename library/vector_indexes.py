"""HNSW indexes over the chunks' vectors: one per embedding model.

`Chunk.embedding` has no fixed dimension, so that a model switch needs no schema change;
an HNSW index needs one. Each model therefore gets a partial expression index,

    CREATE INDEX … USING hnsw ((embedding::vector(D)) vector_cosine_ops)
        WHERE embedding_model = '<model>'

(`halfvec` instead of `vector` beyond 2,000 dimensions, see indexed_type)
and the search orders by the same expression, `embedding::vector(D) <=> query::vector(D)`
with D the query's length, and filters on the same model: PostgreSQL uses an expression
index only for the very expression it was built on, and a partial one only when the query
implies its predicate. Chunks of one model all have its dimension, so the cast never fails.
One table per dimension would also work, but then the reembed switch would move rows
between tables and the search would pick a table by name; a partial index keeps one table,
one statement and a switch that is one UPDATE.

The index is made for the active model when its first vectors are written (ingest), by the
reembed switch for the next model before it switches (the index is then empty and the
switch's UPDATE fills it), by migration 0009 for a database that already has vectors, and by
`manage.py reembed --index` for the active model. Other models' indexes are dropped after
a switch, with their vectors.

Each model also gets a partial GIN index over the chunks' full-text vectors,

    CREATE INDEX … USING gin (search_vector) WHERE embedding_model = '<model>'

made and dropped with its HNSW index (ensure_model_indexes, drop_other_model_indexes; for
any dimension, as it does not index the vector), and by migration 0011 for every model
already present. The hybrid search's full-text side (retrieval/sql/hybrid.sql, `all_matches`)
filters on the same model, so the planner reads only the model's postings: with one GIN
index over all chunks it would read every model's postings of a lexeme and AND them with a
bitmap of the model's chunks. There is no global index (migration 0011 dropped it): no
search reads full text across models, and the table
holds the active model's chunks only (the next model's vectors wait in ChunkEmbedding until
the switch), where a global index would hold the same entries at twice the writes.
"""

from __future__ import annotations

import hashlib
import logging

from django.db import DatabaseError, connection, transaction
from psycopg import sql

logger = logging.getLogger(__name__)

PREFIX = "library_chunk_hnsw_"
TEXT_PREFIX = "library_chunk_gin_"
# Made in this process and committed: no catalog lookup for them again. Never filled
# inside a transaction, which could still roll the index back.
_known: set[str] = set()


def indexed_type(dimensions: int) -> str | None:
    """The type the vectors are cast to for the index: pgvector's HNSW takes `vector` up to
    2,000 dimensions and `halfvec` (half precision, plenty for a ranking) up to 4,000;
    beyond that there is no index and every search scans exactly."""
    if dimensions <= 2_000:
        return "vector"
    if dimensions <= 4_000:
        return "halfvec"
    return None


def _digest(model: str) -> str:
    # Model names are free text ("text-embedding-3-large", "org/model"); a digest keeps the
    # name a valid identifier under PostgreSQL's 63 bytes.
    return hashlib.sha256(model.encode()).hexdigest()[:16]


def index_name(*, model: str, dimensions: int) -> str:
    return f"{PREFIX}{int(dimensions)}_{_digest(model)}"


def text_index_name(*, model: str) -> str:
    return f"{TEXT_PREFIX}{_digest(model)}"


def index_is_valid(name: str) -> bool | None:
    """True for a usable index, False for one left invalid by an interrupted concurrent
    build, None when there is none."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT i.indisvalid FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid "
            "WHERE c.relname = %s",
            [name],
        )
        row = cursor.fetchone()
    return None if row is None else bool(row[0])


def _ensure_index(name: str, *, model: str, method: str) -> bool:
    """Make the partial index `name` over `model`'s chunks (`USING <method>`) unless it
    exists and is valid; True when it was built now.

    Outside a transaction it is built CONCURRENTLY (writers go on; it waits for the
    transactions already running); inside one, plainly (it holds writers of library_chunk
    back until that transaction ends).
    """
    if name in _known:
        return False
    concurrently = "" if connection.in_atomic_block else "CONCURRENTLY "
    valid = index_is_valid(name)
    built = False
    if not valid:
        if connection.in_atomic_block:
            # Rows written earlier in this transaction leave their deferred foreign-key
            # checks pending, and PostgreSQL builds no index over a table with pending
            # checks: run them now (Django's own way, SET CONSTRAINTS ALL IMMEDIATE then
            # DEFERRED again).
            connection.check_constraints()
        with connection.cursor() as cursor:
            if valid is False:
                cursor.execute(f"DROP INDEX {concurrently}IF EXISTS {name}")
            literal = sql.Literal(model).as_string(connection.connection)
            logger.info("building the index %s for %s", name, model)
            cursor.execute(
                f"CREATE INDEX {concurrently}IF NOT EXISTS {name} ON library_chunk "
                f"USING {method} WHERE embedding_model = {literal}"
            )
        built = True
    if not connection.in_atomic_block:
        _known.add(name)
    return built


def ensure_vector_index(*, model: str, dimensions: int) -> bool:
    """Make the HNSW index for `model`'s vectors of `dimensions` unless it exists; True
    when it was built now. Building over many existing vectors is slow and CPU-heavy
    (minutes for 100k vectors); over none it is instant."""
    if not model or dimensions < 1:
        raise ValueError(f"no index for model {model!r} of {dimensions} dimensions")
    kind = indexed_type(dimensions)
    if kind is None:
        logger.warning(
            "%s makes vectors of %d dimensions, more than an HNSW index takes (4,000): "
            "every search scans exactly",
            model,
            dimensions,
        )
        return False
    return _ensure_index(
        index_name(model=model, dimensions=dimensions),
        model=model,
        method=f"hnsw ((embedding::{kind}({int(dimensions)})) {kind}_cosine_ops)",
    )


def ensure_text_index(*, model: str) -> bool:
    """Make the GIN index over `model`'s chunks' full-text vectors unless it exists; True
    when it was built now (3 s over 100k chunks)."""
    if not model:
        raise ValueError("no full-text index for a chunk without an embedding model")
    return _ensure_index(text_index_name(model=model), model=model, method="gin (search_vector)")


def ensure_model_indexes(*, model: str, dimensions: int) -> list[str]:
    """All of `model`'s indexes (full text, then HNSW when its dimension allows one);
    the names of those built now."""
    if not model or dimensions < 1:
        raise ValueError(f"no index for model {model!r} of {dimensions} dimensions")
    built = []
    if ensure_text_index(model=model):
        built.append(text_index_name(model=model))
    if ensure_vector_index(model=model, dimensions=dimensions):
        built.append(index_name(model=model, dimensions=dimensions))
    return built


def vector_dimensions(*, model: str, table: str = "library_chunk") -> int | None:
    """The dimension of `model`'s stored vectors (in `table`), None when it has none."""
    column = "embedding_model" if table == "library_chunk" else "model"
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT vector_dims(embedding) FROM {table} WHERE {column} = %s LIMIT 1", [model]
        )
        row = cursor.fetchone()
    return None if row is None else int(row[0])


def _indexes(prefix: str) -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = 'library_chunk' "
            "AND indexname LIKE %s ORDER BY indexname",
            [prefix.replace("_", r"\_") + "%"],
        )
        return [name for (name,) in cursor.fetchall()]


def vector_indexes() -> list[str]:
    """Every model's HNSW index."""
    return _indexes(PREFIX)


def text_indexes() -> list[str]:
    """Every model's full-text (GIN) index."""
    return _indexes(TEXT_PREFIX)


def drop_other_model_indexes(*, model: str, dimensions: int) -> list[str]:
    """Drop the indexes, HNSW and full text, of every model but `model` (their vectors
    are gone after a switch); the names dropped."""
    keep = {
        index_name(model=model, dimensions=dimensions),
        text_index_name(model=model),
    }
    concurrently = "" if connection.in_atomic_block else "CONCURRENTLY "
    indexes = vector_indexes() + text_indexes()
    dropped = [name for name in indexes if name not in keep]
    with connection.cursor() as cursor:
        for name in dropped:
            cursor.execute(f"DROP INDEX {concurrently}IF EXISTS {name}")
            _known.discard(name)
    return dropped


def ensure_model_indexes_quietly(*, model: str, dimensions: int) -> None:
    """ensure_model_indexes for a caller whose own work is done and must not fail on it
    (ingest, after its chunks are committed): a failure is logged, searches read the
    model's chunks without the index until it exists."""
    try:
        if connection.in_atomic_block:
            with transaction.atomic():  # a savepoint: a failure leaves the caller's intact
                ensure_model_indexes(model=model, dimensions=dimensions)
        else:
            ensure_model_indexes(model=model, dimensions=dimensions)
    except DatabaseError:
        logger.exception("could not build the indexes for %s", model)
