"""/healthz reports the backlog: what is queued or processing, what failed lately, and, as a
problem, work left unfinished with no job on it for longer than the recovery needs."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.files.base import ContentFile
from django.db import connection
from django.utils import timezone

from ingest.services import add_source
from library.models import Source
from ops import health
from ops.tests.worker_traces import worker_seen


@pytest.fixture(autouse=True)
def fresh_state(db, monkeypatch, settings):
    monkeypatch.setattr(health, "_migrations_current", False)
    settings.HEALTH_DETAIL_ADDRESSES = ["127.0.0.1"]  # the test client's: counts shown
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM procrastinate_workers")
        cursor.execute("DELETE FROM procrastinate_jobs")
    worker_seen(5)


def queued_source(notebook, name: str = "a.txt") -> Source:
    return add_source(
        owner=notebook.owner, notebook=notebook, upload=ContentFile(name.encode() * 40, name=name)
    ).source


@pytest.mark.django_db
def test_the_backlog_counts_waiting_and_failed_work(client, notebook):
    queued_source(notebook)
    failed = queued_source(notebook, "b.txt")
    Source.objects.filter(pk=failed.pk).update(status=Source.Status.FAILED)

    report = client.get("/healthz").json()

    assert report["problems"] == []
    assert report["checks"]["backlog"] == (
        "ok (1 sources queued or processing, 1 failed in 24 h; "
        "0 documents queued or processing, 0 failed in 24 h; "
        "0 slide revisions queued or processing, 0 failed in 24 h)"
    )


@pytest.mark.django_db
def test_work_left_processing_with_no_job_is_reported_stuck(client, notebook):
    source = queued_source(notebook)
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM procrastinate_jobs")  # its job vanished
    Source.objects.filter(pk=source.pk).update(
        status=Source.Status.PROCESSING, updated_at=timezone.now() - timedelta(minutes=6)
    )

    response = client.get("/healthz")

    assert response.status_code == 503
    [problem] = response.json()["problems"]
    assert problem.startswith(
        "backlog: 1 source(s) queued or processing with no job working on them for over 300 s"
    )
