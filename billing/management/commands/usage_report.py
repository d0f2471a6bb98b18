from __future__ import annotations

import json
from datetime import date
from decimal import Decimal
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError, CommandParser

from billing.services import usage_summary, usage_totals
from ops.commands import DatabaseCommand


class Command(DatabaseCommand):
    help = "Print usage and cost per day, user, kind and model."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--user", help="only this username")
        parser.add_argument("--since", help="only from this day on (YYYY-MM-DD)")
        parser.add_argument("--json", action="store_true", help="one JSON object")

    def handle(self, *args: Any, **options: Any) -> None:
        user = None
        if options["user"]:
            user = get_user_model().objects.filter(username=options["user"]).first()
            if user is None:
                raise CommandError(f"There is no user {options['user']!r}.")
        since = None
        if options["since"]:
            try:
                since = date.fromisoformat(options["since"])
            except ValueError as exc:
                raise CommandError(
                    f"--since must be a day as YYYY-MM-DD, got {options['since']!r}."
                ) from exc

        rows = usage_summary(user=user, since=since)
        totals = usage_totals(user=user, since=since)
        if options["json"]:
            payload = {
                "rows": [
                    {
                        "day": row["day"].isoformat(),
                        "user": row["user__username"],
                        "kind": row["kind"],
                        "model": row["model"],
                        "calls": row["calls"],
                        "input_tokens": row["input_tokens"],
                        "output_tokens": row["output_tokens"],
                        "seconds": str(row["seconds"]),
                        "images": row["images"],
                        "cost": str(row["cost"]),
                    }
                    for row in rows
                ],
                "calls": totals["calls"],
                "cost": str(totals["cost"]),
            }
            self.stdout.write(json.dumps(payload))
            return
        if not rows:
            self.stdout.write("No usage.")
            return
        header = ("day", "user", "kind", "model", "calls", "in tokens", "out tokens", "cost")
        lines = [header] + [
            (
                row["day"].isoformat(),
                row["user__username"] or "-",
                row["kind"],
                row["model"],
                str(row["calls"]),
                str(row["input_tokens"]),
                str(row["output_tokens"]),
                _money(row["cost"]),
            )
            for row in rows
        ]
        widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
        for line in lines:
            self.stdout.write(
                "  ".join(
                    cell.ljust(width) for cell, width in zip(line, widths, strict=True)
                ).rstrip()
            )
        self.stdout.write(f"Total: {totals['calls']} calls, cost {_money(totals['cost'])}")


def _money(amount: Decimal) -> str:
    return f"{amount:.6f}"
