from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from ops.commands import DatabaseCommand
from ops.worker import run_worker


class Command(DatabaseCommand):
    help = (
        "Run a job worker until stopped (SIGTERM, Ctrl-C). Unlike `procrastinate worker`, "
        "it starts again by itself after losing the database (a PostgreSQL restart)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--queues", default="", help="comma-separated queues to take jobs from; all if empty"
        )
        parser.add_argument("--concurrency", type=int, default=1)
        parser.add_argument(
            "--shutdown-graceful-timeout",
            type=float,
            default=None,
            help="seconds a stopping worker lets running jobs finish (default: no limit)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        queues = [queue.strip() for queue in options["queues"].split(",") if queue.strip()]
        run_worker(
            queues=queues or None,
            concurrency=options["concurrency"],
            shutdown_graceful_timeout=options["shutdown_graceful_timeout"],
        )
