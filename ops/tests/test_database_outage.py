"""While PostgreSQL is down a page request answers within seconds with a 503 page that says
so (never a hang), /healthz says so too, and pages work again soon after it is back."""

from __future__ import annotations

import time

import pytest
from django.test import Client

from ops.tests.outage import embedded_only, start_database, stop_database

pytestmark = [pytest.mark.django_db(transaction=True), embedded_only]


def test_a_page_during_a_database_outage_is_a_quick_503_and_works_once_it_is_back(owner, settings):
    client = Client(raise_request_exception=False)
    client.force_login(owner)
    assert client.get("/notebooks/").status_code == 200

    stop_database()
    try:
        started = time.monotonic()
        response = client.get("/notebooks/")
        page_seconds = time.monotonic() - started
        started = time.monotonic()
        health = client.get("/healthz")
        health_seconds = time.monotonic() - started
    finally:
        start_database()

    assert response.status_code == 503
    assert "The database is not reachable" in response.content.decode()
    assert response["Retry-After"] == "5"
    assert page_seconds < settings.DATABASE_POOL_TIMEOUT + 3, page_seconds
    assert health.status_code == 503
    assert "database: unreachable" in health.json()["problems"][0]
    assert health_seconds < settings.DATABASE_POOL_TIMEOUT + 3, health_seconds

    deadline = time.monotonic() + 20
    while (status := client.get("/notebooks/").status_code) != 200:
        assert status == 503, status
        assert time.monotonic() < deadline, "pages did not come back within 20 s"
        time.sleep(0.5)
