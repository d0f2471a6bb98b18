"""The notes panel: writing, editing, posting and deleting notes, making one a source,
saving an answer as a note."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from billing.decorators import credit_required
from ingest.notes import edit_note, make_note_a_source
from limits.decorators import rate_limited
from notebooks.forms import NoteForm, NoteSourceForm, PostForm
from notebooks.models import Note, Notebook
from notebooks.services import create_note, delete_note, make_note_a_note_again, save_answer_as_note
from notebooks.views.sources import sources_context
from sharing import access
from sharing.models import Role
from texts.errors import UserFacingError
from web.forms import bad_request
from web.notebook_pages import HtmxHttpRequest, get_notebook_for_user


def notes_context(request: HtmxHttpRequest, notebook: Notebook, **extra: Any) -> dict[str, Any]:
    notes = list(
        access.visible_notes(request.user, notebook)
        .select_related("user", "source")
        .prefetch_related("citations")
    )
    return {
        "notebook": notebook,
        "notes": notes,
        # The panel polls itself while a note is being made a source.
        "notes_polling": any(note.source and not note.source.is_finished for note in notes),
        **extra,
    }


def _get_note(
    request: HtmxHttpRequest, notebook: Notebook, note_id: int, *, own: bool = False
) -> Note:
    """A note of the notebook the user may read, or with `own` one they may change (their
    own, while they may edit the notebook: sharing/access.py); 404 otherwise, as for
    someone else's conversation."""
    notes = (access.own_notes if own else access.visible_notes)(request.user, notebook)
    return get_object_or_404(notes.select_related("source"), pk=note_id)


def _after_note(request: HtmxHttpRequest, notebook: Notebook, **extra: Any) -> HttpResponse:
    """The notes panel again (htmx), else the notebook page."""
    if not request.htmx:
        if error := extra.get("note_error"):
            messages.error(request, error)
        return redirect("notebooks:detail", notebook_id=notebook.pk)
    context = notes_context(request, notebook, **extra)
    if extra.get("with_sources"):
        context.update(sources_context(request, notebook))
        context["oob"] = True
    return render(request, "notebooks/detail.html#notes_changed", context)


@login_required
@require_GET
def notes(request: HtmxHttpRequest, notebook_id: int) -> HttpResponse:
    """The notes panel (htmx polls it while a note is being made a source)."""
    notebook = get_notebook_for_user(request, notebook_id)
    return render(request, "notebooks/detail.html#notes", notes_context(request, notebook))


@login_required
@require_POST
def new_note(request: HtmxHttpRequest, notebook_id: int) -> HttpResponse:
    notebook = get_notebook_for_user(request, notebook_id, Role.EDITOR)
    form = NoteForm(request.POST)
    if not form.is_valid():
        return bad_request(form)
    try:
        create_note(
            user=request.user,
            notebook=notebook,
            content=form.cleaned_data["content"],
            title=form.cleaned_data["title"],
        )
    except UserFacingError as exc:
        return _after_note(request, notebook, note_error=str(exc))
    return _after_note(request, notebook)


@login_required
@require_http_methods(["GET", "POST"])
def note(request: HtmxHttpRequest, notebook_id: int, note_id: int) -> HttpResponse:
    """GET: the note (for htmx, its place in the panel; with ?edit, its form, for its
    author). POST: its new text and title."""
    if request.method == "POST":
        notebook = get_notebook_for_user(request, notebook_id)
        shown = _get_note(request, notebook, note_id, own=True)
        form = NoteForm(request.POST)
        if not form.is_valid():
            return bad_request(form)
        try:
            edit_note(
                note=shown,
                content=form.cleaned_data["content"],
                title=form.cleaned_data["title"],
            )
        except UserFacingError as exc:
            return _after_note(request, notebook, note_error=str(exc))
        return _after_note(request, notebook, with_sources=shown.source_id is not None)
    notebook = get_notebook_for_user(request, notebook_id)
    editing = "edit" in request.GET
    shown = _get_note(request, notebook, note_id, own=editing)
    context = {"notebook": notebook, "note": shown, "editing": editing}
    if request.htmx:
        return render(request, "notebooks/detail.html#note", context)
    return render(request, "notebooks/note.html", context)


@login_required
@require_POST
def delete_note_view(request: HtmxHttpRequest, notebook_id: int, note_id: int) -> HttpResponse:
    notebook = get_notebook_for_user(request, notebook_id)
    shown = _get_note(request, notebook, note_id, own=True)
    was_source = shown.source_id is not None
    delete_note(note=shown)
    return _after_note(request, notebook, with_sources=was_source)


@login_required
@require_POST
def post_note(request: HtmxHttpRequest, notebook_id: int, note_id: int) -> HttpResponse:
    """Post one's note to the notebook (its other readers may read it), or make it private."""
    notebook = get_notebook_for_user(request, notebook_id)
    shown = _get_note(request, notebook, note_id, own=True)
    form = PostForm(request.POST)
    if not form.is_valid():
        return bad_request(form)
    shown.post(form.cleaned_data["posted"] == "1")
    return _after_note(request, notebook)


@login_required
@require_POST
@credit_required
@rate_limited("upload")
def note_source(request: HtmxHttpRequest, notebook_id: int, note_id: int) -> HttpResponse:
    """Make the note a source of the notebook (`source=1`), or a note only again."""
    notebook = get_notebook_for_user(request, notebook_id)
    shown = _get_note(request, notebook, note_id, own=True)
    form = NoteSourceForm(request.POST)
    if not form.is_valid():
        return bad_request(form)
    if form.cleaned_data["source"] == "1":
        make_note_a_source(note=shown)
    else:
        make_note_a_note_again(note=shown)
    return _after_note(request, notebook, with_sources=True)


@login_required
@require_POST
def save_to_note(request: HtmxHttpRequest, notebook_id: int, message_id: int) -> HttpResponse:
    """Save an answer the user may read to a note of theirs, citations and all."""
    notebook = get_notebook_for_user(request, notebook_id, Role.EDITOR)
    answer = get_object_or_404(
        access.visible_messages(request.user, notebook)
        .select_related("conversation")
        .prefetch_related("citations"),
        pk=message_id,
    )
    try:
        save_answer_as_note(user=request.user, message=answer)
    except UserFacingError as exc:
        return _after_note(request, notebook, note_error=str(exc))
    return _after_note(request, notebook, note_saved=True)
