"""A person asks for a document (queued for a worker), for a failed one to be made again, or
for one to be deleted; a command waits for one to be made."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils.translation import gettext as _

from generation.documents.kinds import KINDS, WITHOUT_A_MODEL
from generation.documents.models import GeneratedDocument
from generation.documents.services.making import needs_a_model
from generation.documents.services.writing import LANGUAGES
from library.models import Source
from notebooks.models import Notebook
from ops import recovery
from providers.chat import chat_available
from texts.errors import UserFacingError


class DocumentBusy(UserFacingError):
    """The document is queued or being made."""


class NoSourceChosen(UserFacingError):
    """The asker ticked none of the notebook's sources."""


def request_document(
    *,
    user: User,
    notebook: Notebook,
    kind: str,
    language: str = "",
    chosen_sources: Sequence[int] | None = None,
    audio_format: str = "",
    length: str = "",
    video_format: str = "",
) -> GeneratedDocument:
    """Queue a document of `kind`; `language` "" lets the sources decide; made from the
    `chosen_sources` only (ids; None: all); an audio overview in `audio_format` at `length`,
    a video overview in `video_format` ("": the defaults). UserFacingError for an unknown
    kind, language, format or length, a format or length for another kind, or no source
    chosen."""
    if kind not in KINDS:
        raise UserFacingError(f"Unknown kind of document {kind!r}; use one of {', '.join(KINDS)}.")
    if language and language not in LANGUAGES:
        raise UserFacingError(f"Unknown language {language!r}; use one of {', '.join(LANGUAGES)}.")
    formats, lengths = GeneratedDocument.AudioFormat, GeneratedDocument.Length
    if audio_format and audio_format not in formats.values:
        raise UserFacingError(
            f"Unknown audio format {audio_format!r}; use one of {', '.join(formats.values)}."
        )
    if length and length not in lengths.values:
        raise UserFacingError(f"Unknown length {length!r}; use one of {', '.join(lengths.values)}.")
    if (audio_format or length) and kind != GeneratedDocument.Kind.AUDIO:
        raise UserFacingError(_("A format and a length are for audio overviews only."))
    video_formats = GeneratedDocument.VideoFormat
    if video_format and video_format not in video_formats.values:
        raise UserFacingError(
            f"Unknown video format {video_format!r}; use one of {', '.join(video_formats.values)}."
        )
    if video_format and kind != GeneratedDocument.Kind.VIDEO:
        raise UserFacingError(_("A video format is for video overviews only."))
    if chosen_sources is not None and not chosen_sources:
        raise NoSourceChosen(_("No source is ticked: tick at least one source to generate from."))
    if kind not in WITHOUT_A_MODEL and not chat_available():
        raise UserFacingError(needs_a_model(kind).translated())
    from generation.tasks import generate_document as task

    with transaction.atomic():
        document = GeneratedDocument.objects.create(
            notebook=notebook,
            owner=user,
            kind=kind,
            requested_language=language,
            source_ids=None if chosen_sources is None else sorted(chosen_sources),
            audio_format=audio_format or formats.DEEP_DIVE,
            length=length or lengths.DEFAULT,
            video_format=video_format or video_formats.EXPLAINER,
        )
        task.defer(document_id=document.pk)
    return document


def retry_document(*, document: GeneratedDocument, user: User) -> GeneratedDocument:
    """Queue a failed (or finished) document to be made again, from the sources as they are.
    Only by whoever made it: a retry is billed to them (PermissionDenied for anyone else)."""
    from generation.tasks import generate_document as task

    if document.owner_id != user.pk:
        raise PermissionDenied(_("Only whoever made this document can try it again."))
    with transaction.atomic():
        document = GeneratedDocument.objects.select_for_update().get(pk=document.pk)
        # Busy only while a live job holds it (ops/recovery.py).
        if not document.is_finished and recovery.is_held(document):
            raise DocumentBusy(f"“{document}” is already being made.")
        recovery.release_dead_jobs(document)
        document.status = GeneratedDocument.Status.QUEUED
        document.error = ""
        document.stage = GeneratedDocument.Stage.NONE
        document.save(update_fields=["status", "error", "stage", "updated_at"])
        task.defer(document_id=document.pk)
    return document


def delete_document(*, document: GeneratedDocument) -> None:
    """Remove the document, its searchable source (and chunks) and its files (audio, video,
    a deck's exports). A job still queued for it finds no row and does nothing."""
    files = [each for each in _files(document) if each]
    with transaction.atomic():
        if document.source_id:
            Source.objects.filter(pk=document.source_id).delete()
        document.delete()
    for each in files:
        each.storage.delete(each.name)


def _files(document: GeneratedDocument) -> list[Any]:
    return [document.audio, document.video, document.pptx, document.pdf]


def wait_for_document(
    document_id: int, *, poll_seconds: float = 1.0, idle_seconds: float | None = None
) -> GeneratedDocument:
    """Block until the document is ready (and indexed) or failed. A worker may be making
    it; without one, its own job (and only that) runs in this process (ops/waiting.py).
    Raises ops.waiting.GaveUp when nothing moved for `idle_seconds` (WAIT_IDLE_SECONDS)."""
    from ops.waiting import Waiting, wait_for

    [document] = wait_for(
        Waiting(
            work=recovery.work_for(GeneratedDocument),
            ids=[document_id],
            is_done=lambda document: document.is_finished and not document.stage,
            describe=lambda document: (
                f"{document.get_kind_display()} #{document.pk} is "
                f"{document.status}" + (f" ({document.stage})" if document.stage else "")
            ),
            idle_seconds=settings.WAIT_IDLE_SECONDS if idle_seconds is None else idle_seconds,
            poll_seconds=poll_seconds,
        )
    )
    return document
