from __future__ import annotations

import json
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError, CommandParser

from memory import services
from memory.services import MemoryRefused
from ops.commands import DatabaseCommand
from sharing import access
from sharing.models import Role
from texts.errors import UserFacingError


class Command(DatabaseCommand):
    help = (
        "List, add or forget the facts a person asked the chat to remember in a notebook "
        "(as /memory, /remember, /forget and /memory clear do there)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("action", choices=["list", "add", "forget", "clear"])
        parser.add_argument(
            "text", nargs="?", default="", help="add: the fact; forget: its number or words"
        )
        parser.add_argument("--user", required=True, help="username")
        parser.add_argument("--notebook", required=True, help="notebook title")
        parser.add_argument(
            "--everywhere",
            action="store_true",
            help="add: for all the person's notebooks; clear: also forget those",
        )
        parser.add_argument("--json", action="store_true", help="list: print JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        user = get_user_model().objects.filter(username=options["user"]).first()
        if user is None:
            raise CommandError(f"There is no user {options['user']!r}.")
        try:
            notebook = access.find_notebook(user, options["notebook"], Role.EDITOR)
        except UserFacingError as exc:
            raise CommandError(str(exc)) from exc
        if notebook is None:
            raise CommandError(f"{options['user']} has no notebook {options['notebook']!r}.")
        action, text = options["action"], options["text"]
        try:
            if action == "add":
                fact, new = services.remember(
                    user=user, notebook=None if options["everywhere"] else notebook, text=text
                )
                self.stdout.write(("Remembered: " if new else "Already remembered: ") + fact.text)
            elif action == "forget":
                fact = services.find_fact(user=user, notebook=notebook, which=text)
                fact.delete()
                self.stdout.write(f"Forgotten: {fact.text}")
            elif action == "clear":
                count = services.forget_all(
                    user=user, notebook=notebook, everywhere=options["everywhere"]
                )
                self.stdout.write(f"Forgot {count} remembered fact(s).")
            else:
                self._list(user, notebook, as_json=options["json"])
        except MemoryRefused as exc:
            raise CommandError(str(exc)) from exc

    def _list(self, user: Any, notebook: Any, *, as_json: bool) -> None:
        facts = [
            {"number": number, "text": fact.text, "everywhere": fact.notebook_id is None}
            for number, fact in enumerate(services.facts_for(user=user, notebook=notebook), 1)
        ]
        if as_json:
            self.stdout.write(json.dumps(facts, ensure_ascii=False))
            return
        if not facts:
            self.stdout.write("Nothing is remembered in this notebook.")
        for fact in facts:
            where = "all notebooks" if fact["everywhere"] else "this notebook"
            self.stdout.write(f"{fact['number']}. {fact['text']} ({where})")
