from __future__ import annotations

import json
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError, CommandParser

from ops.commands import DatabaseCommand
from retrieval.chosen_sources import source_choice
from sharing import access
from texts.errors import UserFacingError


class Command(DatabaseCommand):
    help = (
        "List the notes a person may read in a notebook (their own and the posted ones), "
        "with their citations, and the notebook's sources with which are ticked for them."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--user", required=True, help="username")
        parser.add_argument("--notebook", required=True, help="notebook title")
        parser.add_argument("--json", action="store_true", help="print one JSON object")

    def handle(self, *args: Any, **options: Any) -> None:
        user = get_user_model().objects.filter(username=options["user"]).first()
        if user is None:
            raise CommandError(f"There is no user {options['user']!r}.")
        try:
            notebook = access.find_notebook(user, options["notebook"])
        except UserFacingError as exc:
            raise CommandError(str(exc)) from exc
        if notebook is None:
            raise CommandError(f"{user.get_username()} has no notebook {options['notebook']!r}.")
        notes = (
            access.visible_notes(user, notebook)
            .select_related("user", "source")
            .prefetch_related("citations")
        )
        choice = source_choice(user=user, notebook=notebook)
        ticked = {source.pk for source in choice.ticked}
        payload: dict[str, Any] = {
            "notebook": notebook.title,
            "sources": [
                {
                    "id": source.pk,
                    "title": source.title,
                    "kind": source.kind,
                    "status": source.status,
                    "ticked": source.pk in ticked,
                }
                for source in choice.listed
            ],
            "notes": [
                {
                    "id": note.pk,
                    "title": note.display_title,
                    "author": note.user.get_username(),
                    "posted": note.posted,
                    "content": note.content,
                    # Its source while it is one (kind "note"), else null.
                    "source_id": note.source_id,
                    "source_status": note.source.status if note.source else None,
                    "citations": [
                        {
                            "n": cited.n,
                            "source_id": cited.source_id,
                            "source": cited.source_title,
                            "page": cited.page,
                            "quote": cited.quote,
                        }
                        for cited in note.citations.all()
                    ],
                }
                for note in notes
            ],
        }
        if options["json"]:
            self.stdout.write(json.dumps(payload, ensure_ascii=False))
            return
        self.stdout.write(f"Sources ({len(ticked)} of {len(choice.listed)} ticked):")
        for source in payload["sources"]:
            mark = "x" if source["ticked"] else " "
            self.stdout.write(f"  [{mark}] {source['id']}: {source['title']} ({source['kind']})")
        self.stdout.write(f"Notes ({len(payload['notes'])}):")
        for note in payload["notes"]:
            extra = [note["author"]]
            if note["posted"]:
                extra.append("posted")
            if note["source_id"]:
                extra.append(f"source {note['source_id']}, {note['source_status']}")
            self.stdout.write(f"- #{note['id']} {note['title']} ({', '.join(extra)})")
            for line in note["content"].splitlines():
                self.stdout.write(f"    {line}")
            for cited in note["citations"]:
                page = f", page {cited['page']}" if cited["page"] else ""
                self.stdout.write(f"    [{cited['n']}] {cited['source']}{page}")
