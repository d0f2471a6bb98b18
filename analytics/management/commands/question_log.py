from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import CommandError, CommandParser

from analytics.figures import figures
from analytics.models import QuestionLog
from analytics.services import delete_expired_logs, delete_user_log
from ops.commands import DatabaseCommand
from sharing import access
from sharing.models import Role
from texts.errors import UserFacingError


class Command(DatabaseCommand):
    help = (
        "The question log: its figures for a notebook or the site (report), deleting what "
        "is older than QUESTION_LOG_DAYS (purge), or one person's questions (forget-user)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("action", choices=["report", "purge", "forget-user"])
        parser.add_argument("username", nargs="?", default="", help="forget-user: whose log")
        parser.add_argument("--user", help="report: the notebook's owner or editor")
        parser.add_argument("--notebook", help="report: the notebook's title (else the site)")
        parser.add_argument("--days", type=int, default=30, help="report: the last N days")
        parser.add_argument("--json", action="store_true", help="report: print one JSON object")

    def handle(self, *args: Any, **options: Any) -> None:
        action = options["action"]
        if action == "purge":
            count = delete_expired_logs()
            self.stdout.write(
                f"Deleted {count} question(s) older than {settings.QUESTION_LOG_DAYS} days."
            )
        elif action == "forget-user":
            user = self._user(options["username"])
            self.stdout.write(f"Deleted {delete_user_log(user=user)} question(s) of {user}.")
        else:
            self._report(options)

    def _user(self, username: str | None) -> Any:
        if not username:
            raise CommandError("Name the user: question_log forget-user alice.")
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"There is no user {username!r}.")
        return user

    def _report(self, options: dict[str, Any]) -> None:
        if options["days"] < 1:
            raise CommandError("--days must be at least 1.")
        logs = QuestionLog.objects.all()
        if options["notebook"]:
            user = self._user(options["user"])
            try:
                notebook = access.find_notebook(user, options["notebook"], Role.EDITOR)
            except UserFacingError as exc:
                raise CommandError(str(exc)) from exc
            if notebook is None:
                raise CommandError(f"{user} has no notebook {options['notebook']!r}.")
            logs = logs.filter(notebook=notebook)
        shown = figures(logs, days=options["days"])
        report = {
            "days": options["days"],
            "asked": shown.asked,
            "refused": shown.refused,
            "refusal_rate": shown.refusal_rate,
            "citations": shown.citations,
            "unsupported_citations": shown.unsupported,
            "unsupported_rate": shown.unsupported_rate,
            "ms": {
                step: {"p50": p50, "p95": p95} for step, (p50, p95) in shown.percentiles.items()
            },
            "tokens": shown.tokens,
            "cost": str(shown.cost),
            "per_day": [
                {"day": str(day.day), "asked": day.asked, "refused": day.refused}
                for day in shown.days
                if day.asked
            ],
            "unanswered": [{"question": q, "times": n} for q, n in shown.unanswered],
            "top_sources": [{"title": t, "answers": n} for t, n in shown.top_sources],
        }
        if options["json"]:
            self.stdout.write(json.dumps(report, ensure_ascii=False))
            return
        self.stdout.write(
            f"Last {report['days']} days: {shown.asked} question(s), {shown.refused} refused"
        )
        for step, (p50, p95) in shown.percentiles.items():
            self.stdout.write(f"  {step}: p50 {_ms(p50)}, p95 {_ms(p95)}")
        if shown.citations:
            self.stdout.write(
                f"  citations not supported: {shown.unsupported} of {shown.citations}"
            )
        self.stdout.write(f"  tokens {shown.tokens}, cost {shown.cost}")
        for question, times in shown.unanswered:
            self.stdout.write(f"  not answered ({times}×): {question}")
        for title, count in shown.top_sources:
            self.stdout.write(f"  cited in {count} answer(s): {title}")


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f} ms"
