"""What every command that works on a data folder's database shares."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from ops.health import HealthProblem, check_migrations


class DatabaseCommand(BaseCommand):
    """A command that reads or writes the data folder's database. On a folder whose tables
    are not made yet (a new LOUPE_DATA_DIR, or code newer than the database) it stops with
    what to run, before it would fail on a missing table with a traceback."""

    requires_migrations_checks = True

    def check_migrations(self) -> None:
        try:
            check_migrations()
        except HealthProblem as exc:
            raise CommandError(f"This data folder's database is not ready: {exc}.") from exc
