"""What the index tests share: a document that cuts into ten-odd chunks at 25 tokens, for a
reembed to work through, and the plan of a search's ranking statement as it ran."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from django.db import connection, transaction

TEXT = " ".join(
    f"Paragraph {n}: grey herons wait by pond number {n} while night trains pass the reeds."
    for n in range(12)
).encode()


def sent_statements(search) -> tuple[str, str, dict[str, Any]]:
    """Run `search`: its settings statement, and its ranking statement with the parameters
    bound to it, as they were sent."""
    sent: list[tuple[str, Any]] = []

    def keep(execute, sql, params, many, context):
        sent.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(keep):
        search()
    settings_sql = next(sql for sql, _ in sent if "set_config" in sql)
    ranking, params = next((sql, params) for sql, params in sent if "WITH" in sql)
    return settings_sql, ranking, params


# The SQL types of the statements' parameters (retrieval/search.py, `_params`).
PARAMETER_TYPES = {
    "notebook": "bigint",
    "reader": "bigint",
    "source": "bigint",
    "chosen": "bigint[]",
    "vector": "vector",
    "floor": "float8",
    "question": "text",
}


def explain_as_run(search, *, options: str = "ANALYZE, COSTS OFF", first: Sequence[str] = ()):
    """Run `search`, then EXPLAIN its ranking statement on the plan it ran on: the one made
    once for any values of its parameters (retrieval/search.py), under its settings, after
    `first` (statements that change what the planner may use, in this rolled-back
    transaction). The plan's rows: the lines of its text, or its JSON."""
    settings_sql, ranking, params = sent_statements(search)
    names = list(dict.fromkeys(re.findall(r"%\((\w+)\)s", ranking)))
    positional = re.sub(
        r"%\((\w+)\)s", lambda match: f"${names.index(match.group(1)) + 1}", ranking
    ).replace("%%", "%")
    with transaction.atomic(), connection.cursor() as cursor:
        for statement in first:
            cursor.execute(statement)
        cursor.execute(settings_sql)
        types = ", ".join(PARAMETER_TYPES[name] for name in names)
        cursor.execute(f"PREPARE explained ({types}) AS " + positional)
        # The values written in (a utility statement takes no bound parameters).
        arguments = ", ".join(f"%s::{PARAMETER_TYPES[name]}" for name in names)
        cursor.execute(
            f"EXPLAIN ({options}) EXECUTE explained({arguments})",
            [params[name] for name in names],
        )
        rows = [row[0] for row in cursor.fetchall()]
        cursor.execute("DEALLOCATE explained")
        transaction.set_rollback(True)
    return rows


def plan_of_the_ranking_statement(search) -> str:
    """Run `search`, then EXPLAIN ANALYZE its ranking statement as it ran."""
    return "\n".join(explain_as_run(search))


def cte_plan(plan: str, name: str) -> list[str]:
    """The lines of the plan of one CTE of the statement."""
    lines = plan.splitlines()
    start = lines.index(f"  CTE {name}")
    rest = [n for n, line in enumerate(lines[start + 1 :], start + 1) if line.startswith("  CTE ")]
    return lines[start : rest[0] if rest else len(lines)]
