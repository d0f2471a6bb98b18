"""A command on a data folder whose database is not migrated (a new LOUPE_DATA_DIR, code
newer than its tables) stops saying what to run, instead of a traceback about a missing
table."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db.migrations.recorder import MigrationRecorder

from ops import health
from ops.commands import DatabaseCommand

# Commands that must run before the tables exist, or make them: restore fills an empty
# database, backup copies whatever is there, serve migrates first (make run); makemessages
# reads only the code.
WITHOUT_TABLES = {"backup", "restore", "serve", "makemessages"}


@pytest.mark.django_db
def test_a_command_on_a_database_not_migrated_says_what_to_run(monkeypatch):
    monkeypatch.setattr(health, "_migrations_current", False)
    latest = MigrationRecorder.Migration.objects.filter(app="library").latest("id")
    latest.delete()  # as if the code were one migration ahead of the database

    with pytest.raises(CommandError) as refused:
        call_command("ask", "--user", "nobody", "--notebook", "none", "Where do herons wait?")

    assert str(refused.value) == (
        "This data folder's database is not ready: 1 migration(s) not applied "
        f"(library.{latest.name}); run manage.py migrate."
    )


def test_every_command_that_reads_the_database_checks_it_first():
    root = Path(__file__).resolve().parents[2]
    names = {
        path.stem: f"{path.parts[-4]}.management.commands.{path.stem}"
        for path in root.glob("*/management/commands/*.py")
        if not path.stem.startswith("_")
    }
    assert len(names) > 15
    unchecked = [
        name
        for name, module in names.items()
        if name not in WITHOUT_TABLES
        and not issubclass(importlib.import_module(module).Command, DatabaseCommand)
    ]
    assert unchecked == []
