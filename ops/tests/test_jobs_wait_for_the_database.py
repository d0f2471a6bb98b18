"""A job that meets a lost database waits for it (within DATABASE_WAIT_SECONDS) and, if it
fails on it, is retried: a database restart is transient, not the job's failure."""

from __future__ import annotations

import threading
import time

import psycopg
import pytest
from django.db import OperationalError
from procrastinate.jobs import Job

from ops.database import DatabaseUnavailable, wait_for_database
from ops.jobs import TRANSIENT_RETRY
from ops.tests.outage import embedded_only, start_database, stop_database

pytestmark = pytest.mark.django_db(transaction=True)


@embedded_only
def test_a_job_starting_while_the_database_restarts_waits_for_it():
    stop_database()
    restart = threading.Timer(3, start_database)
    restart.start()
    started = time.monotonic()
    try:
        wait_for_database(seconds=60)
    finally:
        restart.join()
    assert 3 <= time.monotonic() - started < 30


@embedded_only
def test_waiting_for_the_database_gives_up_after_its_bound(settings):
    stop_database()
    started = time.monotonic()
    try:
        with pytest.raises(DatabaseUnavailable, match="did not answer for 1 s"):
            wait_for_database(seconds=1)
        gave_up_after = time.monotonic() - started
    finally:
        start_database()
    assert gave_up_after < 1 + settings.DATABASE_POOL_TIMEOUT + 2


def test_a_lost_database_is_retried_and_an_integrity_error_is_not(settings):
    settings.JOB_RETRY_ATTEMPTS = 3
    job = Job(id=1, queue="ingest", lock=None, queueing_lock=None, task_name="t", attempts=0)
    for lost in (
        OperationalError("couldn't get a connection after 4.00 sec"),
        psycopg.OperationalError("the server closed the connection"),
        DatabaseUnavailable("did not answer"),
    ):
        assert TRANSIENT_RETRY.get_retry_decision(exception=lost, job=job) is not None, lost
    wrapped = RuntimeError("while writing chunks")
    wrapped.__cause__ = psycopg.OperationalError("terminating connection")
    assert TRANSIENT_RETRY.get_retry_decision(exception=wrapped, job=job) is not None
    assert TRANSIENT_RETRY.get_retry_decision(exception=ValueError("bad"), job=job) is None
    last = Job(id=1, queue="ingest", lock=None, queueing_lock=None, task_name="t", attempts=2)
    assert TRANSIENT_RETRY.get_retry_decision(exception=lost, job=last) is None
