"""What the index tests share: a document that cuts into ten-odd chunks at 25 tokens, for a
reembed to work through, and the plan of a search's ranking statement as it ran."""

from __future__ import annotations

from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

TEXT = " ".join(
    f"Paragraph {n}: grey herons wait by pond number {n} while night trains pass the reeds."
    for n in range(12)
).encode()


def plan_of_the_ranking_statement(search) -> str:
    """Run `search`, then EXPLAIN ANALYZE its ranking statement as it ran."""
    with CaptureQueriesContext(connection) as queries:
        search()
    ranking = next(q["sql"] for q in queries.captured_queries if "WITH" in q["sql"])
    settings_query = next(q["sql"] for q in queries.captured_queries if "set_config" in q["sql"])
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(settings_query)
        cursor.execute("EXPLAIN (ANALYZE, COSTS OFF) " + ranking)
        return "\n".join(row[0] for row in cursor.fetchall())


def cte_plan(plan: str, name: str) -> list[str]:
    """The lines of the plan of one CTE of the statement."""
    lines = plan.splitlines()
    start = lines.index(f"  CTE {name}")
    rest = [n for n, line in enumerate(lines[start + 1 :], start + 1) if line.startswith("  CTE ")]
    return lines[start : rest[0] if rest else len(lines)]
