"""A notebook's notes: the caller's own and those posted to the notebook."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from ninja import Router, Status

from api.auth import WRITE, ApiRequest
from api.errors import BILLED, COMMON, ApiError
from api.v1.common import billed, get_notebook
from api.v1.schemas import NoteIn, NoteOut, NotePatch, note_out
from ingest.notes import edit_note, make_note_a_source
from notebooks.models import Note
from notebooks.services import create_note, delete_note, make_note_a_note_again
from sharing import access
from sharing.models import Role
from texts.errors import UserFacingError

router = Router(tags=["notes"])


def _notes(request: ApiRequest, notebook_id: int, *, own: bool = False):
    notebook = get_notebook(request, notebook_id)
    notes = (access.own_notes if own else access.visible_notes)(request.user, notebook)
    return notebook, notes.select_related("source").prefetch_related("citations__chunk")


@router.get(
    "/notebooks/{notebook_id}/notes", response={200: list[NoteOut], **COMMON}, summary="Notes"
)
def list_notes(request: ApiRequest, notebook_id: int) -> list[dict]:
    _notebook, notes = _notes(request, notebook_id)
    return [note_out(note, request.user.pk) for note in notes]


@router.post(
    "/notebooks/{notebook_id}/notes",
    response={201: NoteOut, **COMMON},
    auth=WRITE,
    summary="Write a note",
)
def add_note(request: ApiRequest, notebook_id: int, payload: NoteIn) -> Status:
    notebook = get_notebook(request, notebook_id, Role.EDITOR)
    try:
        note = create_note(
            user=request.user, notebook=notebook, content=payload.content, title=payload.title
        )
    except UserFacingError as exc:
        raise ApiError(422, "invalid_note", str(exc), "body.content") from exc
    return Status(201, note_out(note, request.user.pk))


@router.get(
    "/notebooks/{notebook_id}/notes/{note_id}",
    response={200: NoteOut, **COMMON},
    summary="A note with its citations",
)
def read_note(request: ApiRequest, notebook_id: int, note_id: int) -> dict:
    _notebook, notes = _notes(request, notebook_id)
    return note_out(get_object_or_404(notes, pk=note_id), request.user.pk)


@router.patch(
    "/notebooks/{notebook_id}/notes/{note_id}",
    response={200: NoteOut, **BILLED},
    auth=WRITE,
    summary="Change a note of yours: its text, title, posting, or whether it is a source",
)
def change(request: ApiRequest, notebook_id: int, note_id: int, payload: NotePatch) -> dict:
    _notebook, notes = _notes(request, notebook_id, own=True)
    note: Note = get_object_or_404(notes, pk=note_id)
    if payload.content is not None or payload.title is not None:
        try:
            edit_note(
                note=note,
                content=note.content if payload.content is None else payload.content,
                title=note.title if payload.title is None else payload.title,
            )
        except UserFacingError as exc:
            raise ApiError(422, "invalid_note", str(exc), "body.content") from exc
    if payload.posted is not None:
        note.post(payload.posted)
    if payload.is_source is True:
        billed(request, "upload")
        make_note_a_source(note=note)
    elif payload.is_source is False:
        make_note_a_note_again(note=note)
    note.refresh_from_db()
    return note_out(note, request.user.pk)


@router.delete(
    "/notebooks/{notebook_id}/notes/{note_id}",
    response={204: None, **COMMON},
    auth=WRITE,
    summary="Delete a note of yours (and its source, if it is one)",
)
def remove_note(request: ApiRequest, notebook_id: int, note_id: int) -> Status:
    _notebook, notes = _notes(request, notebook_id, own=True)
    delete_note(note=get_object_or_404(notes, pk=note_id))
    return Status(204, None)
