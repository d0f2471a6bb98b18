"""/healthz: 200 when the database answers, the schema is current and a worker was seen
recently; otherwise 503 naming what is wrong. Anyone may ask, on any host name."""

from __future__ import annotations

import pytest
from django.db import connection

from ops import health
from ops.tests.worker_traces import worker_seen


@pytest.fixture(autouse=True)
def fresh_state(db, monkeypatch):
    monkeypatch.setattr(health, "_migrations_current", False)
    # Workers other tests left behind (rolled back with this test's transaction).
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM procrastinate_workers")


@pytest.mark.django_db
def test_healthy_with_a_recent_worker(client):
    worker_seen(5)

    response = client.get("/healthz")

    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response["Cache-Control"] == "no-store"
    report = response.json()
    assert report["status"] == "ok" and report["problems"] == []
    assert report["checks"]["database"] == "ok"
    assert report["checks"]["migrations"] == "ok"
    assert report["checks"]["worker"].startswith("ok (1 seen")


@pytest.mark.django_db
def test_unhealthy_without_a_worker_heard_from_lately(client, settings):
    settings.HEALTH_WORKER_SECONDS = 60
    worker_seen(600)  # a dead worker's last heartbeat

    response = client.get("/healthz")

    assert response.status_code == 503
    report = response.json()
    assert report["status"] == "unhealthy"
    assert report["problems"] == [
        "worker: no worker has sent a heartbeat in the last 60 s; start one: manage.py worker"
    ]


@pytest.mark.django_db
def test_unhealthy_while_a_migration_is_not_applied(client):
    worker_seen(1)
    with connection.cursor() as cursor:
        cursor.execute(
            "DELETE FROM django_migrations WHERE app = 'library' AND name = "
            "(SELECT max(name) FROM django_migrations WHERE app = 'library') RETURNING name"
        )
        (latest,) = cursor.fetchone()

    response = client.get("/healthz")

    assert response.status_code == 503
    problem = response.json()["checks"]["migrations"]
    assert f"library.{latest}" in problem and "manage.py migrate" in problem


@pytest.mark.django_db
def test_answers_any_host_without_signing_in(client, settings):
    settings.ALLOWED_HOSTS = ["loupe.example.org"]
    settings.SECURE_SSL_REDIRECT = True
    worker_seen(1)

    assert client.get("/healthz", HTTP_HOST="10.0.0.7:8000").status_code == 200
    # Every other page still checks the host.
    assert client.get("/login/", HTTP_HOST="10.0.0.7:8000").status_code == 400
