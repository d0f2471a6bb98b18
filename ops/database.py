"""Riding out a database that went away (a PostgreSQL restart, a failover, a full disk).

A job that meets a lost database must not fail the source, document or re-embed it works
on: the database will be back, and the failure could not even be recorded. Such errors count
as transient (ops/jobs.py) and the job runs again; a job starting while the database is away
first waits for it, within DATABASE_WAIT_SECONDS.
"""

from __future__ import annotations

import logging
import time

import psycopg
from django.db import DatabaseError, InterfaceError, OperationalError, connection
from procrastinate.connector import BaseAsyncConnector

logger = logging.getLogger(__name__)

# What a lost or unreachable server raises: Django's wrappers, and psycopg's own errors where
# they escape Django (the connection pool's PoolTimeout is a psycopg.OperationalError).
# Integrity or programming errors are the job's own fault and stay failures.
LOST_DATABASE_ERRORS: tuple[type[BaseException], ...] = (
    OperationalError,
    InterfaceError,
    psycopg.OperationalError,
    psycopg.InterfaceError,
)


class DatabaseUnavailable(OperationalError):
    """The database did not answer within the time allowed."""


def is_lost_database(exception: BaseException) -> bool:
    """Whether the exception, or one that caused it, says the database is unreachable."""
    seen: BaseException | None = exception
    while seen is not None:
        if isinstance(seen, LOST_DATABASE_ERRORS):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def wait_for_database(*, seconds: float, pause: float = 1.0) -> None:
    """Return once the default database answers; raise DatabaseUnavailable after `seconds`.

    Each try gets a fresh connection: a connection that died with the server would fail
    again (with a pool, closing it hands it back to be replaced).
    """
    deadline = time.monotonic() + seconds
    tries = 0
    while True:
        tries += 1
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT 1")
        except DatabaseError as exc:
            if not is_lost_database(exc):
                raise
            connection.close()
            left = deadline - time.monotonic()
            if left <= 0:
                raise DatabaseUnavailable(
                    f"the database did not answer for {seconds:.0f} s (DATABASE_WAIT_SECONDS): "
                    f"{type(exc).__name__}: {str(exc).strip()[:200]}"
                ) from exc
            if tries == 1:
                logger.warning("the database is not reachable; waiting up to %.0f s", seconds)
            time.sleep(min(pause, left))
            continue
        if tries > 1:
            logger.warning("the database answers again after %d tries", tries)
        return


def worker_connector() -> BaseAsyncConnector:
    """Procrastinate's connector for a worker (the Django connector cannot run one), on the
    same database, its pool giving up a lost connection's tries after 8 s as Django's does
    (config/settings/storage.py): a worker started again after an outage connects at once."""
    from procrastinate.contrib.django.utils import connector_params
    from procrastinate.psycopg_connector import PsycopgConnector

    return PsycopgConnector(kwargs=connector_params("default"), reconnect_timeout=8.0)
