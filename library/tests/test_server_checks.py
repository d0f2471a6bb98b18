"""Before `migrate` changes anything, a server that cannot run Loupe is named in one
sentence: too old, no pgvector, or a role without the rights it needs."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.db import connection
from django.db.migrations.loader import MigrationLoader

from library import checks


class Answers:
    """A cursor whose one row is what a server of another kind would answer."""

    def __init__(self, **row):
        values = {
            "number": 180_001,
            "version": "18.1",
            "installed": True,
            "available": True,
            "superuser": False,
            "create_in_database": False,
            "create_in_schema": True,
            "schema": "public",
        } | row
        self.row = tuple(values.values())

    def execute(self, sql, params=None):
        pass

    def fetchone(self):
        return self.row


def test_a_server_with_pgvector_and_the_rights_has_no_problem():
    assert checks.server_problems(Answers()) == []


def test_an_old_server_is_named_with_its_version():
    assert checks.server_problems(Answers(number=140_011, version="14.11")) == [
        "Loupe needs PostgreSQL 15 or later; this server is 14.11."
    ]


def test_a_server_without_pgvector_says_so():
    (problem,) = checks.server_problems(Answers(installed=False, available=False))
    assert "does not offer the pgvector extension ('vector')" in problem


def test_a_role_that_may_not_enable_pgvector_is_told_who_must():
    (problem,) = checks.server_problems(Answers(installed=False))
    assert "run CREATE EXTENSION vector; once" in problem
    assert checks.server_problems(Answers(installed=False, create_in_database=True)) == []


@pytest.mark.django_db
def test_a_real_role_without_create_on_the_schema_is_named(django_db_blocker):
    # PostgreSQL 15 and later give no one but the owner CREATE in the public schema.
    with connection.cursor() as cursor:
        cursor.execute("CREATE ROLE loupe_reader_probe")  # rolled back with the test
        cursor.execute("SET LOCAL ROLE loupe_reader_probe")
        problems = checks.server_problems(cursor)
        cursor.execute("RESET ROLE")
    assert problems == [
        "Loupe's role may not create tables in the schema public: grant it CREATE there "
        "(GRANT CREATE ON SCHEMA public TO <role>;)."
    ]


@pytest.mark.django_db
def test_migrate_stops_before_migrating_on_such_a_server(monkeypatch):
    monkeypatch.setattr(
        checks, "server_problems", lambda cursor: ["Loupe needs PostgreSQL 15 or later."]
    )
    [(_app, latest)] = MigrationLoader(connection).graph.leaf_nodes("library")
    with pytest.raises(SystemCheckError, match="Loupe needs PostgreSQL 15 or later"):
        call_command("migrate", "library", "0020", verbosity=0, skip_checks=False)
    with connection.cursor() as cursor:
        cursor.execute("SELECT max(name) FROM django_migrations WHERE app = 'library'")
        assert cursor.fetchone()[0] == latest  # nothing was unapplied
