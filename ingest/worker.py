"""Running queued ingest jobs from a command, and waiting for sources to finish."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from procrastinate.contrib.django import app

from library.models import Source


def drain_queue(queue: str = "ingest") -> None:
    """Run a worker in this process until the queue has no job left.

    The Django connector cannot run a worker (it hands it undecoded JSON), so the worker
    gets its own psycopg connector on the same database.
    """
    connector = app.connector.get_worker_connector()  # type: ignore[attr-defined]
    with app.replace_connector(connector) as worker_app:
        worker_app.run_worker(
            queues=[queue], wait=False, install_signal_handlers=False, listen_notify=False
        )


def wait_for_sources(
    source_ids: Iterable[int],
    *,
    poll_seconds: float = 1.0,
    on_poll: Callable[[list[Source]], None] | None = None,
) -> list[Source]:
    """Block until every source is ready or failed (another worker may be processing it)."""
    ids = list(source_ids)
    while True:
        sources = list(Source.objects.filter(pk__in=ids))
        if all(source.is_finished for source in sources):
            return sources
        if on_poll:
            on_poll(sources)
        drain_queue()
        if all(source.is_finished for source in Source.objects.filter(pk__in=ids)):
            continue  # done: the next loop returns without sleeping
        time.sleep(poll_seconds)
