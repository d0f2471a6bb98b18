from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core.management.base import CommandError, CommandParser

from ingest.services.add_and_wait import add_and_wait
from library.models import Preferences, Source
from notebooks.models import Notebook
from notebooks.services import get_or_create_notebook
from ops.commands import DatabaseCommand
from ops.waiting import GaveUp
from sharing import access
from sharing.models import Role
from texts.errors import UserFacingError


class Command(DatabaseCommand):
    help = (
        "Add files and web pages (http:// or https:// URLs) to a notebook, process them and "
        "wait: with no worker running, it runs their jobs (only theirs) itself. Creates the "
        "user (without a usable password) and the notebook when missing. Exit status 1 when "
        "any source failed."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "paths", nargs="+", metavar="PATH", help="a file, or a URL starting with http(s)://"
        )
        parser.add_argument("--user", required=True, help="username of the owner")
        parser.add_argument("--notebook", required=True, help="notebook title")
        parser.add_argument("--json", action="store_true", help="one JSON line per source")
        parser.add_argument(
            "--give-up-after",
            type=float,
            default=None,
            metavar="SECONDS",
            help="stop waiting when no source has moved for this long (default: "
            "WAIT_IDLE_SECONDS, 600); the sources stay queued for a worker",
        )
        parser.add_argument(
            "--pdf-capture",
            choices=["text", "vision", "auto"],
            default=None,
            help="how new PDFs are read: text layer, vision, or vision only for pages "
            "without a text layer (auto); default: the user's preference (auto unless set)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        as_json: bool = options["json"]
        if options["give_up_after"] is not None and options["give_up_after"] <= 0:
            raise CommandError("--give-up-after must be more than 0 seconds.")
        # With --json, stdout holds only the result lines; everything else goes to stderr.
        say = self.stderr.write if as_json else self.stdout.write
        user = self._user(options["user"], say)
        notebook = self._notebook(user, options["notebook"], say)
        try:
            results = add_and_wait(
                owner=user,
                notebook=notebook,
                paths=options["paths"],
                pdf_capture=options["pdf_capture"] or Preferences.of(user).pdf_capture,
                idle_seconds=options["give_up_after"],
                say=say,
            )
        except GaveUp as exc:
            raise CommandError(str(exc)) from exc
        for result in results:
            if as_json:
                self.stdout.write(json.dumps(result, ensure_ascii=False))
            else:
                detail = (
                    f"{result['pages'] or '-'} pages, {result['chunks']} chunks"
                    if result["status"] == Source.Status.READY
                    else result["error"]
                )
                self.stdout.write(f"{result['name']}: {result['status']} ({detail})")
        if any(result["status"] != Source.Status.READY for result in results):
            sys.exit(1)

    def _user(self, username: str, say: Callable[[str], None]) -> User:
        user, created = get_user_model().objects.get_or_create(username=username)
        if created:
            user.set_unusable_password()
            user.save()
            say(f"Created user {user.get_username()} (no usable password).")
        return user

    def _notebook(self, user: User, typed: str, say: Callable[[str], None]) -> Notebook:
        """The user's own notebook of that title, or one shared with them as an editor;
        neither: a new one of their own."""
        # A title typed on a command line may carry what a browser's form would not show:
        # bidirectional controls (U+202E) that make it read otherwise.
        title = "".join(char for char in typed if char.isprintable())
        try:
            notebook = access.find_notebook(user, title, Role.EDITOR)
        except UserFacingError as exc:
            raise CommandError(str(exc)) from exc
        if notebook is None:
            notebook, created = get_or_create_notebook(owner=user, title=title)
            if created:
                say(f"Created notebook {notebook.title!r}.")
        return notebook
