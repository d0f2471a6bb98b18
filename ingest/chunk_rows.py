"""Writing a source's chunks and their vectors: one statement each, not one per row.

A 261-page manual has ~600 chunks. Django's `bulk_create` followed by an UPDATE of the
full-text vectors would write every row twice, and `bulk_update` of the vectors is a CASE
with a branch per row, compiled in Python and evaluated per row in PostgreSQL (quadratic):
together most of Loupe's own time in reading a manual (docs/decisions.md, "Speed"). Here the rows
travel as arrays, unnested in SQL, with the full-text vector computed in the INSERT.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, cast

import numpy as np
import psycopg
from django.db import connection
from pgvector import Vector
from pgvector.psycopg.vector import register_vector_info
from psycopg.types import TypeInfo

from ingest.chunker import ChunkDraft
from library.models import Chunk

_TABLE = Chunk._meta.db_table


def insert_chunks(
    *, source_id: int, drafts: Sequence[ChunkDraft], embedding_model: str, search_config: str
) -> None:
    """Insert the drafts as the source's chunks (ordinals from 0), without vectors, each
    with its full-text vector stemmed by `search_config`: what `SearchVector("text",
    config=...)` gives (library/tests: the two are compared)."""
    connection.ensure_connection()
    # A psycopg cursor of its own on Django's connection (inside its transaction), binding
    # on the server: Django's cursors bind on the client, quoting the chunks' ~1 MB of text
    # into the statement in Python, where it costs more CPU than the INSERT itself.
    with psycopg.Cursor(connection.connection) as cursor:
        cursor.execute(
            f"""
            INSERT INTO {_TABLE} (source_id, ordinal, page, page_label, section, text,
                                  char_start, char_end, embedding_model, search_vector)
            SELECT %s, row.ordinal - 1, row.page, row.page_label, row.section::jsonb, row.text,
                   row.char_start, row.char_end, %s,
                   to_tsvector(%s::regconfig, COALESCE(row.text, ''))
            FROM unnest(%s::integer[], %s::text[], %s::text[], %s::text[], %s::integer[],
                        %s::integer[])
                 WITH ORDINALITY AS row(page, page_label, section, text, char_start, char_end,
                                        ordinal)
            """,
            [
                source_id,
                embedding_model,
                search_config,
                [draft.page for draft in drafts],
                [draft.page_label for draft in drafts],
                [json.dumps(list(draft.section)) for draft in drafts],
                [draft.text for draft in drafts],
                [draft.char_start for draft in drafts],
                [draft.char_end for draft in drafts],
            ],
            prepare=False,
        )


def write_vectors(
    *, ids: Sequence[int], vectors: Sequence[Sequence[float]], model: str
) -> set[int]:
    """Give the chunks among `ids` that still have no vector theirs (by `model`); returns
    the ids written. A chunk deleted or embedded meanwhile (its source read again) is left
    as it is. Called inside the caller's transaction: the rows stay locked until it ends.

    The vectors travel in pgvector's binary form, bound as parameters: their text form
    (a repr per float in Python, inlined into the statement by Django's client-side
    binding, parsed back by PostgreSQL) costs as much CPU as the rest of the write, the
    HNSW index taking each new vector most of that.
    """
    if not ids:
        return set()
    connection.ensure_connection()
    # A psycopg cursor of its own on Django's connection (so inside its transaction):
    # Django's cursors bind on the client, which has no binary form.
    with psycopg.Cursor(connection.connection) as cursor:
        _know_vectors(cursor)
        cursor.execute(
            f"""
            UPDATE {_TABLE} AS chunk
            SET embedding = given.embedding, embedding_model = %s
            FROM unnest(%s::bigint[], %b::vector[]) AS given(id, embedding)
            WHERE chunk.id = given.id AND chunk.embedding IS NULL
            RETURNING chunk.id
            """,
            [
                model,
                list(ids),
                [Vector(np.asarray(vector, dtype=np.float32)) for vector in vectors],
            ],
            prepare=False,
        )
        return {row[0] for row in cursor.fetchall()}


def _know_vectors(cursor: psycopg.Cursor) -> None:
    """Teach this cursor pgvector's type (its number differs from database to database).
    The cursor, not the connection: Django's own queries on it keep reading vectors as
    pgvector's Django field expects them. pgvector types the argument as a connection; a
    cursor's adapters serve the same."""
    info = TypeInfo.fetch(cursor.connection, "vector")
    register_vector_info(cast("psycopg.Connection[Any]", cursor), info)
