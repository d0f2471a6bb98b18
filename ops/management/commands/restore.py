from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ops.backup import BackupError, restore


class Command(BaseCommand):
    help = (
        "Make the site again from a file `manage.py backup` wrote: its database, stored files, "
        "secret key and demo login. Into an empty data folder (or database); one that holds "
        "data only with --force, which replaces it. Stop Loupe first (make stop-db is not "
        "needed: the database must run)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path, metavar="FILE")
        parser.add_argument(
            "--force",
            action="store_true",
            help="replace the tables and stored files of a site that holds data",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            summary = restore(archive_path=options["file"], force=options["force"])
        except BackupError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(
            f"Restored {summary.tables} tables, {summary.files} stored files and "
            f"{', '.join(summary.site_files) or 'no data-folder files'} from {summary.path}"
        )
