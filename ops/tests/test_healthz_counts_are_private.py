"""/healthz tells anyone whether the site is healthy, but how much work waits or failed
only to signed-in staff and to the addresses in HEALTH_DETAIL_ADDRESSES."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.files.base import ContentFile
from django.db import connection

from ingest.services import add_source
from ops import health
from ops.tests.worker_traces import worker_seen

COUNTS = "1 sources queued or processing"


@pytest.fixture(autouse=True)
def one_queued_source(db, monkeypatch, notebook, settings):
    monkeypatch.setattr(health, "_migrations_current", False)
    settings.HEALTH_DETAIL_ADDRESSES = []
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM procrastinate_workers")
        cursor.execute("DELETE FROM procrastinate_jobs")
    worker_seen(5)
    add_source(
        owner=notebook.owner, notebook=notebook, upload=ContentFile(b"herons " * 40, name="a.txt")
    )


def test_anyone_gets_the_verdict_without_counts(client):
    report = client.get("/healthz").json()

    assert report["status"] == "ok"
    assert report["checks"]["backlog"] == "ok"


def test_a_signed_in_person_who_is_not_staff_sees_no_counts(client, owner):
    client.force_login(owner)

    assert client.get("/healthz").json()["checks"]["backlog"] == "ok"


def test_staff_see_the_counts(client):
    admin = get_user_model().objects.create_user("admin", password="x", is_staff=True)
    client.force_login(admin)

    assert COUNTS in client.get("/healthz").json()["checks"]["backlog"]


def test_a_configured_address_sees_the_counts(client, settings):
    settings.HEALTH_DETAIL_ADDRESSES = ["192.0.2.10"]

    elsewhere = client.get("/healthz").json()["checks"]["backlog"]
    monitor = client.get("/healthz", REMOTE_ADDR="192.0.2.10").json()["checks"]["backlog"]

    assert elsewhere == "ok"
    assert COUNTS in monitor
