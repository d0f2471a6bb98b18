"""The search's SQL statements: read whole from retrieval/sql/, written out for a model and its
settings (`render`), run as prepared statements on Django's connection, and their rows loaded
as chunks with their sources."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from functools import cache, lru_cache
from pathlib import Path
from typing import Any, cast

import psycopg
import psycopg.sql
from django.db import connection, models

from library.models import Chunk, Source
from library.vector_indexes import indexed_type
from sharing.access import searchable_link_sql

# The hits' chunks and their sources come with the ranking, read by the statement itself:
# a second query to load them costs more than the columns (docs/decisions.md, "Speed"). Not
# the chunks' vector and full-text vector: nothing downstream reads them, and parsing them
# would be a good part of the loading; they stay deferred, as `.defer()` leaves them.
_CHUNK_FIELDS = tuple(
    f for f in Chunk._meta.concrete_fields if f.name not in {"embedding", "search_vector"}
)
_SOURCE_FIELDS = tuple(Source._meta.concrete_fields)
LOADED_COLUMNS = ", ".join(
    [f'lc."{f.column}"' for f in _CHUNK_FIELDS] + [f'ls."{f.column}"' for f in _SOURCE_FIELDS]
)

# The statements, each whole in its file. Their {placeholders} are written into the text:
# what a parameter cannot be (the type the HNSW index was built on, the columns that load the
# hits, the access rule: sharing/access.py's, one copy for every statement that needs it) and
# what is the same for every search of a model under the same settings (the model, the
# limits, the fusion's weights). The question's own values are bound as parameters, so one
# prepared statement serves every question (retrieval/search.py, `_run`).
_SQL = Path(__file__).resolve().parent / "sql"
DENSE_SQL = (_SQL / "dense.sql").read_text()
HYBRID_SQL = (_SQL / "hybrid.sql").read_text()
SPREAD_SQL = (_SQL / "spread.sql").read_text()
# Both statements' first step, the notebook's sources the reader may search: one copy,
# written in where a statement says {scope}, before the placeholders are filled.
SCOPE_SQL = (_SQL / "scope.sql").read_text().rstrip("\n")
_PLACEHOLDER = re.compile(r"\{(\w+)\}")
# The ranking statement's planner settings (hnsw.ef_search by the index's size among them).
SEARCH_SETTINGS_SQL = (_SQL / "search_settings.sql").read_text().rstrip().rstrip(";")


def render(sql: str, *, dimensions: int, constants: Mapping[str, Any]) -> str:
    """The statement as run for vectors of `dimensions` (the model's, the query's length),
    with `constants` written in as SQL literals: the HNSW branch casts to the type its index
    was built on (library/vector_indexes.py)."""
    kind = indexed_type(dimensions) or "vector"  # none: the branch scans exactly
    values = {
        "index_vector": f"{kind}({dimensions})",
        "loaded_columns": LOADED_COLUMNS,
        "searchable_link": searchable_link_sql(link="ns", source="s"),
        "word_rank": word_rank_sql(),
        **{name: sql_literal(value) for name, value in constants.items()},
    }
    sql = sql.replace("{scope}", SCOPE_SQL)
    return _PLACEHOLDER.sub(lambda match: values[match.group(1)], sql)


# A full-text match's `word_rank` (hybrid.sql): for each of the question's lexemes, the
# one-word queries `w.queries` with their idf `w.weights` (its `term_weights`), the chunk's
# ts_rank for it times that weight, summed. Written out for the first WORD_RANK_TERMS (past a
# question's last lexeme the query is NULL, and so is its ts_rank, counted 0); a longer
# question's rest is summed by a subquery. A subquery for all of them cost ~3 µs a row, a
# fifth of the time of a million-chunk notebook's slowest searches, which rank 16,000
# matches each (docs/decisions.md).
WORD_RANK_TERMS = 16


def word_rank_sql(terms: int = WORD_RANK_TERMS) -> str:
    """`word_rank` as an expression over `c.search_vector` and `w`, the first `terms`
    lexemes written out."""
    written = [
        f"coalesce(ts_rank(c.search_vector, w.queries[{n}]) * w.weights[{n}], 0)"
        for n in range(1, terms + 1)
    ]
    rest = (
        f"CASE WHEN cardinality(w.queries) > {terms} THEN coalesce(("
        "SELECT sum(ts_rank(c.search_vector, t.query) * t.weight) "
        f"FROM unnest(w.queries[{terms + 1}:], w.weights[{terms + 1}:]) AS t(query, weight)"
        "), 0) ELSE 0 END"
    )
    return "(" + "\n            + ".join([*written, rest]) + ")"


def sql_literal(value: Any) -> str:
    """`value` as SQL text, quoted by psycopg; a float typed float8 (bare, 0.1 is numeric)."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"a search setting is not a finite number: {value!r}")
    text = psycopg.sql.quote(list(value) if isinstance(value, tuple) else value)
    return f"{text}::float8" if isinstance(value, float) else text


@lru_cache(maxsize=64)
def rendered(sql: str, dimensions: int, constants: tuple[tuple[str, Any], ...]) -> str:
    """`render`'s statement, kept: the same few statements are written for every search."""
    return render(sql, dimensions=dimensions, constants=dict(constants))


class PreparingCursor(psycopg.Cursor):
    """A cursor that binds its parameters on the server and prepares what it runs: Django's
    own cursors bind on the client, which cannot prepare."""

    def execute(
        self,
        query: Any,
        params: Any = None,
        *,
        prepare: bool | None = None,
        binary: bool | None = None,
    ) -> PreparingCursor:
        super().execute(query, params, prepare=True if prepare is None else prepare, binary=binary)
        return self


def prepared_cursor() -> Any:
    """A preparing cursor on Django's connection (so inside its transaction), wrapped as
    Django wraps its own, so that its execute wrappers and its exceptions apply. Not its
    DEBUG query log: psycopg keeps no statement text for a prepared statement's run, which
    that log would show as None."""
    connection.ensure_connection()
    # (django-stubs type the argument as Django's own wrapper; any DB-API cursor is taken.)
    return connection.make_cursor(cast(Any, PreparingCursor(connection.connection)))


@cache
def _loader(model: type[models.Model], fields: tuple[models.Field, ...]) -> Callable[..., Any]:
    """A maker of `model` instances from its columns as PostgreSQL sent them, converted as
    Django's own queries convert them (a JSONField's text parsed, for one). The converters
    are looked up once per process, not for every column of every hit."""
    attnames = [f.attname for f in fields]
    converting = [
        (index, field, converters)
        for index, field in enumerate(fields)
        if (converters := field.get_db_converters(connection))
    ]

    def load(values: Sequence[Any]) -> Any:
        values = list(values)
        for index, field, converters in converting:
            for converter in converters:
                values[index] = converter(values[index], field.cached_col, connection)
        return model.from_db(connection.alias, attnames, values)

    return load


def loaded_chunks(rows: Sequence[tuple]) -> list[tuple[Chunk, float]]:
    """The chunks of the ranking statement's rows (id, similarity, the chunk's and its
    source's columns), each with its similarity. The chunks of one source share one instance
    of it, as prefetch_related would share it: a Source made for every chunk was most of the
    time spent loading them."""
    load_chunk = _loader(Chunk, _CHUNK_FIELDS)
    load_source = _loader(Source, _SOURCE_FIELDS)
    sources: dict[int, Source] = {}
    loaded = []
    for _, similarity, *values in rows:
        chunk = load_chunk(values[: len(_CHUNK_FIELDS)])
        if (source := sources.get(chunk.source_id)) is None:
            source = sources[chunk.source_id] = load_source(values[len(_CHUNK_FIELDS) :])
        chunk.source = source
        loaded.append((chunk, float(similarity)))
    return loaded
