"""The embedded PostgreSQL's settings: shared_buffers sized from the machine's memory (or
DATABASE_SHARED_BUFFERS), written before the server starts and applied at its next start."""

from __future__ import annotations

import psycopg
import pytest
from django.core.exceptions import ImproperlyConfigured

from config.database import (
    MIB,
    SETTINGS_INCLUDE,
    shared_buffers,
    start_embedded_postgres,
    stop_embedded_postgres,
)

GIB = 1024 * MIB


@pytest.mark.parametrize(
    ("memory", "expected"),
    [
        (24 * GIB, "2048MB"),  # a quarter is 6 GB: held to the upper bound
        (4 * GIB, "1024MB"),
        (2 * GIB, "512MB"),
        (256 * MIB, "128MB"),  # a quarter is 64 MB: held to PostgreSQL's own default
    ],
)
def test_a_quarter_of_the_memory_within_bounds(memory, expected):
    assert shared_buffers(memory=memory) == expected


def test_a_configured_size_wins_and_a_malformed_one_is_refused():
    assert shared_buffers("512MB", memory=64 * GIB) == "512MB"
    with pytest.raises(ImproperlyConfigured, match="DATABASE_SHARED_BUFFERS.*512MB or 2GB"):
        shared_buffers("half", memory=64 * GIB)
    with pytest.raises(ImproperlyConfigured, match="'512 MB'"):
        shared_buffers("512 MB")


def test_the_server_starts_with_the_setting_and_takes_a_new_one_at_its_next_start(tmp_path):
    def shown(url: str) -> str:
        with psycopg.connect(url) as conn:
            row = conn.execute("SHOW shared_buffers").fetchone()
            assert row is not None
            return row[0]

    try:
        # A new data folder: the settings are in place before its first start.
        assert shown(start_embedded_postgres(tmp_path, "160MB")) == "160MB"
        stop_embedded_postgres(tmp_path)
        assert shown(start_embedded_postgres(tmp_path, "200MB")) == "200MB"
        conf = (tmp_path / "pgdata" / "postgresql.conf").read_text()
        assert conf.count(SETTINGS_INCLUDE) == 1
    finally:
        stop_embedded_postgres(tmp_path)


def test_the_server_needs_nothing_but_pgvector(tmp_path):
    """The embedded server as the package ships it, with pgvector: no library preloaded,
    no extension of Loupe's own (the search is plain SQL, library/migrations/0021)."""
    try:
        with psycopg.connect(start_embedded_postgres(tmp_path)) as conn:
            row = conn.execute("SHOW shared_preload_libraries").fetchone()
            assert row is not None and row[0] == ""
            available = {
                name for (name,) in conn.execute("SELECT name FROM pg_available_extensions")
            }
            assert "vector" in available
    finally:
        stop_embedded_postgres(tmp_path)


def test_a_running_server_started_with_other_settings_is_named_with_what_to_do(tmp_path):
    """An older Loupe's server (or one from before a setting changed) is joined as it runs;
    the setting that waits for its restart is named, and `make stop-db` said."""
    try:
        start_embedded_postgres(tmp_path, "160MB")
        with pytest.warns(UserWarning, match=r"\(shared_buffers\).*make stop-db"):
            start_embedded_postgres(tmp_path, "200MB")
    finally:
        stop_embedded_postgres(tmp_path)
