from __future__ import annotations

import json
import sys
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError, CommandParser

from generation.documents.kinds import KINDS
from generation.documents.models import GeneratedDocument
from generation.documents.services import LANGUAGES, request_document, wait_for_document
from ops.commands import DatabaseCommand
from ops.waiting import GaveUp
from providers.chat import chat_available
from providers.local_model import join_running_server
from retrieval.chosen_sources import parse_source_ids, source_choice
from sharing import access
from sharing.models import Role
from texts.errors import UserFacingError


class Command(DatabaseCommand):
    help = (
        "Generate one document (report, quiz, table, mind map, infographic, audio overview, "
        "flashcards, slide deck or video overview) from a notebook's sources and wait for it "
        "(with no worker running, its job runs here). Exit status 1 when it failed."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--user", required=True, help="username of the notebook's owner")
        parser.add_argument("--notebook", required=True, help="notebook title")
        parser.add_argument("--kind", required=True, choices=list(KINDS))
        parser.add_argument(
            "--language",
            choices=list(LANGUAGES),
            default="",
            help="write it in this language (default: the sources')",
        )
        parser.add_argument(
            "--format",
            dest="audio_format",
            choices=sorted(
                {*GeneratedDocument.AudioFormat.values, *GeneratedDocument.VideoFormat.values}
            ),
            default="",
            help="an audio overview's format: deep_dive (two hosts, the default), brief (one "
            "voice, about two minutes) or debate (two hosts take sides); a video overview's: "
            "explainer (the default) or brief",
        )
        parser.add_argument(
            "--length",
            choices=list(GeneratedDocument.Length.values),
            default="",
            help="an audio overview's length: short, default or long",
        )
        parser.add_argument(
            "--sources",
            help="ids of the notebook's sources, separated by commas: make it from those only "
            "(default: the sources ticked for you on the notebook page)",
        )
        parser.add_argument("--json", action="store_true", help="print one JSON object")
        parser.add_argument(
            "--give-up-after",
            type=float,
            default=None,
            metavar="SECONDS",
            help="stop waiting when the document has not moved for this long (default: "
            "WAIT_IDLE_SECONDS, 600); it stays queued for a worker",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        join_running_server()  # the local model `serve` runs, as its worker uses it
        document = self._request(options)
        if options["language"] and not chat_available():
            # Said before it is made, as the studio panel does.
            self.stderr.write(
                "No chat model: the document quotes the sources and stays in their language; "
                f"--language {options['language']} cannot be honoured."
            )
        try:
            document = wait_for_document(document.pk, idle_seconds=options["give_up_after"])
        except GaveUp as exc:
            raise CommandError(str(exc)) from exc
        if options["json"]:
            self.stdout.write(json.dumps(_result(document), ensure_ascii=False))
        elif document.status == GeneratedDocument.Status.READY:
            self._print_ready(document)
        else:
            self.stdout.write(
                f"{document.get_kind_display()} #{document.pk} failed: {document.error}"
            )
        if document.status != GeneratedDocument.Status.READY:
            sys.exit(1)

    def _request(self, options: dict[str, Any]) -> GeneratedDocument:
        """The document asked for, queued (its job may run here, while waiting for it)."""
        user = get_user_model().objects.filter(username=options["user"]).first()
        if user is None:
            raise CommandError(f"No user {options['user']!r}.")
        try:
            notebook = access.find_notebook(user, options["notebook"], Role.EDITOR)
        except UserFacingError as exc:
            raise CommandError(str(exc)) from exc
        if notebook is None:
            raise CommandError(f"{user.get_username()} has no notebook {options['notebook']!r}.")
        if options["give_up_after"] is not None and options["give_up_after"] <= 0:
            raise CommandError("--give-up-after must be more than 0 seconds.")
        try:
            chosen = source_choice(user=user, notebook=notebook).searched
            if options["sources"] is not None:
                chosen = parse_source_ids(options["sources"], notebook=notebook)
            video = options["kind"] == GeneratedDocument.Kind.VIDEO
            document = request_document(
                user=user,
                notebook=notebook,
                kind=options["kind"],
                language=options["language"],
                chosen_sources=chosen,
                audio_format="" if video else options["audio_format"],
                video_format=options["audio_format"] if video else "",
                length=options["length"],
            )
        except UserFacingError as exc:
            raise CommandError(str(exc)) from exc
        return document

    def _print_ready(self, document: GeneratedDocument) -> None:
        self.stdout.write(
            f"{document.get_kind_display()} #{document.pk} ready ({document.mode}): "
            f"{document.title}"
        )
        content = _content(document)
        if isinstance(content, str):  # a text, or an audio overview's file
            self.stdout.write(content)
        for each in (document.pptx, document.pdf, document.video):
            if each:
                self.stdout.write(each.path)
        placed = sum(1 for cited in document.citations.all() if cited.attributed)
        if placed:
            self.stdout.write(f"{placed} citations placed by Loupe, not the model.")
        if document.unsupported_dropped:
            self.stdout.write(
                f"{document.unsupported_dropped} claims no passage supports were left out."
            )


def _content(document: GeneratedDocument) -> Any:
    """What the document holds: its text or structure, or an audio overview's file."""
    if document.kind == GeneratedDocument.Kind.AUDIO:
        return document.audio.path if document.audio else None
    return document.content


def _result(document: GeneratedDocument) -> dict[str, Any]:
    """The document as --json prints it."""
    result: dict[str, Any] = {
        "id": document.pk,
        "kind": document.kind,
        "status": document.status,
        "mode": document.mode,
        "error": document.error,
        "title": document.title,
        "source_ids": document.source_ids,
        "content": _content(document),
        # Claims of a model's document no passage supports, left out of it.
        "unsupported_dropped": document.unsupported_dropped,
        "citations": [
            {
                "n": cited.n,
                "source_title": cited.source_title,
                "page": cited.page,
                "quote": cited.quote,
                "supported": cited.supported,
                "attributed": cited.attributed,
            }
            for cited in document.citations.all()
        ],
    }
    if document.kind == GeneratedDocument.Kind.AUDIO:
        result |= {"format": document.audio_format, "length": document.length}
    if document.kind == GeneratedDocument.Kind.SLIDES:
        result |= {
            "pptx": document.pptx.path if document.pptx else None,
            "pdf": document.pdf.path if document.pdf else None,
        }
    if document.kind == GeneratedDocument.Kind.VIDEO:
        result |= {
            "format": document.video_format,
            "mp4": document.video.path if document.video else None,
            "seconds": document.video_seconds,
        }
    return result
