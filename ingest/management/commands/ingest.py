from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.files import File
from django.core.management.base import BaseCommand, CommandError, CommandParser

from ingest.services import UploadRejected, add_source, add_url
from ingest.services.adding import printable_name
from ingest.waiting import source_name, source_progress, wait_for_sources
from library.models import Preferences, Source
from notebooks.services import get_or_create_notebook
from ops.waiting import GaveUp
from sharing import access
from sharing.models import Role
from texts.errors import UserFacingError

URL_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")


class Command(BaseCommand):
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

        # A title typed on a command line may carry what a browser's form would not show:
        # bidirectional controls (U+202E) that make it read otherwise.
        title = "".join(char for char in options["notebook"] if char.isprintable())
        User = get_user_model()
        user, created = User.objects.get_or_create(username=options["user"])
        if created:
            user.set_unusable_password()
            user.save()
            say(f"Created user {user.get_username()} (no usable password).")
        pdf_capture = options["pdf_capture"] or Preferences.of(user).pdf_capture
        # The user's own notebook of that title, or one shared with them as an editor;
        # neither: a new one of their own.
        try:
            notebook = access.find_notebook(user, title, Role.EDITOR)
        except UserFacingError as exc:
            raise CommandError(str(exc)) from exc
        if notebook is None:
            notebook, created = get_or_create_notebook(owner=user, title=title)
            if created:
                say(f"Created notebook {notebook.title!r}.")

        results: list[dict[str, Any]] = []
        # A source's results: more than one when the same bytes came under several names.
        queued: dict[int, list[dict[str, Any]]] = {}
        urls: dict[int, str] = {}
        for raw in options["paths"]:
            path = Path(raw)
            # Any scheme counts as a URL, so that ftp://… is refused as such, not as a file.
            is_url = bool(URL_SCHEME.match(raw)) and not path.exists()
            result: dict[str, Any] = {
                "source_id": None,
                "name": raw if is_url else printable_name(path.name),
                "kind": None,
                "status": Source.Status.FAILED.value,
                "pages": None,
                "chunks": 0,
                "error": "",
            }
            results.append(result)
            if not is_url and not path.is_file():
                result["error"] = f"{raw}: no such file."
                continue
            try:
                if is_url:
                    added = add_url(owner=user, notebook=notebook, url=raw, pdf_capture=pdf_capture)
                else:
                    with path.open("rb") as handle:
                        added = add_source(
                            owner=user,
                            notebook=notebook,
                            upload=File(handle, path.name),
                            pdf_capture=pdf_capture,
                        )
            except UploadRejected as exc:
                result["error"] = str(exc)
                continue
            result["source_id"] = added.source.pk
            queued.setdefault(added.source.pk, []).append(result)
            if is_url:
                urls[added.source.pk] = added.source.url
            if not added.created:
                say(f"{result['name']}: already in the library, linked to the notebook.")

        said: dict[int, str] = {}

        def progress(sources: list[Source]) -> None:
            for source in sources:
                if source.is_finished or source.status == Source.Status.QUEUED:
                    continue
                line = f"{source_name(source)}: {source_progress(source)}"
                if said.get(source.pk) != line:
                    said[source.pk] = line
                    say(line)

        idle = options["give_up_after"]
        try:
            finished = wait_for_sources(queued, on_poll=progress, idle_seconds=idle)
        except GaveUp as exc:
            raise CommandError(str(exc)) from exc
        for source in finished:
            for result in queued[source.pk]:
                result.update(
                    kind=source.kind,
                    status=source.status,
                    pages=source.page_count,
                    chunks=source.chunk_count,
                    error=source.error,
                )

        # A web page whose bytes the owner already had is replaced by that source, which
        # keeps the page's address (ingest.services.pipeline._link_instead).
        for source_id, url in urls.items():
            if Source.objects.filter(pk=source_id).exists():
                continue
            replacement = (
                Source.objects.filter(owner=user, url=url).exclude(kind=Source.Kind.URL).first()
            )
            if replacement is None:
                for result in queued[source_id]:
                    result["error"] = (
                        "This web page had the content of a source already in the library, "
                        "which the notebook now links."
                    )
                continue
            try:
                [source] = wait_for_sources([replacement.pk], idle_seconds=idle)
            except GaveUp as exc:
                raise CommandError(str(exc)) from exc
            say(f"{url}: the same content as {source.title!r}, linked to the notebook.")
            for result in queued[source_id]:
                result.update(
                    source_id=source.pk,
                    kind=source.kind,
                    status=source.status,
                    pages=source.page_count,
                    chunks=source.chunk_count,
                    error=source.error,
                )

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
