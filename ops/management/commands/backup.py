from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ops.backup import BackupError, back_up, default_backup_path


class Command(BaseCommand):
    help = (
        "Write the whole site to one file while Loupe runs: the database (pg_dump, one "
        "snapshot), the stored files, and the data folder's secret key and demo login "
        "(ops/backup.py). `manage.py restore FILE` makes the site again from it."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--to",
            type=Path,
            default=None,
            metavar="FILE",
            help="where to write it (default: loupe-backup-<date>-<time>.tar.gz here)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            summary = back_up(to=options["to"] or default_backup_path())
        except BackupError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(
            f"Backed up {summary.tables} tables, {summary.files} stored files and "
            f"{', '.join(summary.site_files) or 'no data-folder files'} to {summary.path}"
        )
