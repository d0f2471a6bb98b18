"""What Loupe needs of its PostgreSQL server, checked before `migrate` changes anything:
version 15 or later, the pgvector extension (the only one), and the rights to create it and
the tables. Django runs database checks at the start of `migrate` (`make run`, compose's
`migrate` service), so a server that lacks one stops there with one sentence, before any
migration is applied."""

from __future__ import annotations

from typing import Any

from django.core.checks import Error, Tags, register
from django.db import DatabaseError, connection

OLDEST_SERVER = 150_000  # server_version_num of PostgreSQL 15
HOW = "docs/deploy.md, 'A PostgreSQL of your own', says how."


def server_problems(cursor: Any) -> list[str]:
    """What this server lacks, each as one sentence (none: it can run Loupe)."""
    cursor.execute(
        "SELECT current_setting('server_version_num')::int, current_setting('server_version'), "
        "EXISTS (SELECT FROM pg_extension WHERE extname = 'vector'), "
        "EXISTS (SELECT FROM pg_available_extensions WHERE name = 'vector'), "
        "(SELECT rolsuper FROM pg_roles WHERE rolname = current_user), "
        "has_database_privilege(current_database(), 'CREATE'), "
        "has_schema_privilege(current_schema(), 'CREATE'), current_schema()"
    )
    (
        number,
        version,
        installed,
        available,
        superuser,
        create_in_database,
        create_in_schema,
        schema,
    ) = cursor.fetchone()
    problems = []
    if number < OLDEST_SERVER:
        problems.append(f"Loupe needs PostgreSQL 15 or later; this server is {version}.")
    if not installed and not available:
        problems.append(
            "This PostgreSQL server does not offer the pgvector extension ('vector'), "
            "which Loupe needs to store and search embeddings."
        )
    elif not installed and not (superuser or create_in_database):
        problems.append(
            "The pgvector extension is not enabled in this database, and Loupe's role may "
            "not enable it: as an administrator, run CREATE EXTENSION vector; once."
        )
    if schema is None or not create_in_schema:
        problems.append(
            f"Loupe's role may not create tables in the schema {schema or '(none)'}: grant it "
            "CREATE there (GRANT CREATE ON SCHEMA public TO <role>;)."
        )
    return problems


@register(Tags.database)
def postgresql_can_run_loupe(app_configs: Any, **kwargs: Any) -> list[Error]:
    if not kwargs.get("databases"):
        return []  # asked for no database: a plain `check`, or a test without one
    try:
        with connection.cursor() as cursor:
            problems = server_problems(cursor)
    except DatabaseError:
        return []  # no server to ask: the connection's own error says so, more plainly
    return [Error(problem, hint=HOW, id="library.E001") for problem in problems]
