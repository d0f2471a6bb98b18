"""Traces a worker leaves in the database, made by hand: its heartbeat, a job it died holding."""

from __future__ import annotations

from datetime import timedelta

from asgiref.sync import async_to_sync
from django.db import connection
from django.utils import timezone
from procrastinate.contrib.django import app


def worker_seen(seconds_ago: float) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO procrastinate_workers (last_heartbeat) VALUES (%s)",
            [timezone.now() - timedelta(seconds=seconds_ago)],
        )


def worker_dies_holding_the_job(job_id: int) -> None:
    """What a worker killed mid-job leaves: the job "doing", its heartbeat getting old."""

    async def take(worker_app) -> int:
        async with worker_app.open_async():
            manager = worker_app.job_manager
            worker_id = await manager.register_worker()
            job = await manager.fetch_job(queues=["ingest"], worker_id=worker_id)
        assert job is not None and job.id == job_id
        return worker_id

    connector = app.connector.get_worker_connector()  # type: ignore[attr-defined]
    with app.replace_connector(connector) as worker_app:
        worker_id = async_to_sync(take)(worker_app)
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE procrastinate_workers SET last_heartbeat = %s WHERE id = %s",
            [timezone.now() - timedelta(minutes=5), worker_id],
        )
