"""Stopping and starting the embedded PostgreSQL the tests run on, for the fault tests."""

from __future__ import annotations

import contextlib
import os
import time

import pytest
from django.conf import settings
from django.db import connection

from config.database import start_embedded_postgres, stop_embedded_postgres

embedded_only = pytest.mark.skipif(
    bool(os.environ.get("DATABASE_URL")), reason="stops and starts the embedded PostgreSQL"
)


def stop_database() -> None:
    """A fast shutdown, as `python -m config.database stop` does: clients are cut off."""
    stop_embedded_postgres(settings.DATA_DIR)
    with contextlib.suppress(Exception):
        connection.close()  # this process's connection died with the server


def start_database() -> None:
    """Start it again, and return once this process reaches it: on a loaded machine the
    first connections after a start can take longer than the pool's wait."""
    start_embedded_postgres(settings.DATA_DIR, os.environ.get("DATABASE_SHARED_BUFFERS", ""))
    deadline = time.monotonic() + 60
    while True:
        with contextlib.suppress(Exception):
            connection.close()
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT 1")
            return
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)
