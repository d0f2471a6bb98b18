"""The sources column: adding files and web pages, reading one again, removing one,
ticking the ones questions use."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from billing.decorators import credit_required
from ingest.services import SourceBusy, UploadRejected, add_source, add_url, reprocess_source
from library.models import Preferences, Source
from limits.decorators import rate_limited
from notebooks import guides
from notebooks.forms import ChooseForm, UploadForm, WebPageForm
from notebooks.models import Notebook
from notebooks.services import SourceNotRemovable, unlink_source
from ops import waiting
from retrieval.chosen_sources import choose_sources, source_choice
from sharing import access
from sharing.models import Role
from texts.errors import UserFacingError
from web.forms import bad_request
from web.notebook_pages import HtmxHttpRequest, get_notebook_for_user


def sources_context(request: HtmxHttpRequest, notebook: Notebook) -> dict[str, Any]:
    # Generated documents live in the studio column, where they are made, opened, asked
    # about and deleted; listing them here too would offer a second, different "remove".
    links = (
        access.notebook_links(notebook)
        .exclude(source__kind=Source.Kind.GENERATED)
        .select_related("source")
    )
    sources = [link.source for link in links.order_by("-added_at", "-id")]
    # The sources this person may read again (their own; a public one if they published it).
    changeable = set(
        access.changeable_sources(request.user)
        .filter(pk__in=[source.pk for source in sources])
        .values_list("pk", flat=True)
    )
    choice = source_choice(user=request.user, notebook=notebook)
    # Made here the first time a ready source is shown without one (offline: from its
    # headings, at once; with a model: queued, one call).
    made = guides.guides_for(sources)
    return {
        "notebook": notebook,
        "sources": sources,
        "changeable": changeable,
        "choice": choice,
        "ticked": {source.pk for source in choice.ticked},
        "guides": made,
        "suggested": guides.suggested_questions(choice.ticked, made),
        "may_ask": notebook.role in (Role.OWNER, Role.EDITOR),
        # A fragment (htmx) of the list updates the count above the question box too.
        "scope_oob": bool(getattr(request, "htmx", False)),
        # The partial polls itself only while there is something left to watch (a ready
        # source still has a stage while its summary is written).
        "polling": any(not source.is_finished or source.stage for source in sources),
        # A queued source waits its turn behind others, or for a worker none is running.
        "worker_alive": any(source.status == Source.Status.QUEUED for source in sources)
        and waiting.worker_alive(),
    }


def capture_context(user: User) -> dict[str, Any]:
    """The upload form's PDF capture select, preselected with the person's default."""
    return {
        # Short names: the select sits in the narrow sources column and must read in full
        # (Preferences names each mode at length).
        "capture_choices": [
            (Source.PdfCapture.TEXT, _("text layer only")),
            (Source.PdfCapture.VISION, _("every page as an image")),
            (Source.PdfCapture.AUTO, _("text, or images if none")),
        ],
        "pdf_capture": Preferences.of(user).pdf_capture,
    }


@login_required
@require_GET
def sources(request: HtmxHttpRequest, notebook_id: int) -> HttpResponse:
    notebook = get_notebook_for_user(request, notebook_id)
    return render(request, "notebooks/detail.html#sources", sources_context(request, notebook))


def _after_adding(
    request: HtmxHttpRequest, notebook: Notebook, notes: list[tuple[str, str]]
) -> HttpResponse:
    """The response to an upload, an added web page or a removed source: the sources list
    and the notes (why a file was refused, that one was already in the library)."""
    if request.htmx:
        context = sources_context(request, notebook)
        context.update({"upload_notes": notes, "oob": True})
        return render(request, "notebooks/detail.html#upload_result", context)
    for level, text in notes:
        messages.add_message(request, messages.ERROR if level == "error" else messages.INFO, text)
    return redirect("notebooks:detail", notebook_id=notebook.pk)


@login_required
@require_POST
@credit_required
@rate_limited("upload")
def upload(request: HtmxHttpRequest, notebook_id: int) -> HttpResponse:
    notebook = get_notebook_for_user(request, notebook_id, Role.EDITOR)
    form = UploadForm(request.POST)
    if not form.is_valid():
        return bad_request(form)
    files = request.FILES.getlist("files")
    # add_source refuses an unknown mode with a message; none given: the person's default.
    pdf_capture = form.cleaned_data["pdf_capture"] or Preferences.of(request.user).pdf_capture
    notes: list[tuple[str, str]] = []  # (level, text) for each file that needs a word
    if not files:
        notes.append(("error", _("Choose at least one file to upload.")))
    for upload in files:
        try:
            added = add_source(
                owner=request.user, notebook=notebook, upload=upload, pdf_capture=pdf_capture
            )
        except UploadRejected as exc:
            notes.append(("error", str(exc)))
            continue
        if not added.created:
            notes.append(
                (
                    "info",
                    _(
                        "%(name)s is already in your library as “%(title)s”; "
                        "it was not stored again."
                    )
                    % {"name": upload.name, "title": added.source.title},
                )
            )

    return _after_adding(request, notebook, notes)


@login_required
@require_POST
@credit_required
@rate_limited("upload")
def reprocess(request: HtmxHttpRequest, notebook_id: int, source_id: int) -> HttpResponse:
    """Retry a failed source or read a ready one again: in a notebook the user edits, a
    source they may change (their own; a public one only its publisher)."""
    notebook = get_notebook_for_user(request, notebook_id, Role.EDITOR)
    source = get_object_or_404(access.notebook_sources(notebook), pk=source_id)
    access.require_changeable(request.user, source)
    try:
        reprocess_source(source=source)
    except SourceBusy as exc:
        messages.info(request, str(exc))
    if request.htmx:
        return render(request, "notebooks/detail.html#sources", sources_context(request, notebook))
    return redirect("notebooks:detail", notebook_id=notebook.pk)


@login_required
@require_POST
def remove_source(request: HtmxHttpRequest, notebook_id: int, source_id: int) -> HttpResponse:
    """Take a source out of this notebook; it stays in the library (and other notebooks).
    A generated document is deleted in the studio instead (its source goes with it)."""
    notebook = get_notebook_for_user(request, notebook_id, Role.EDITOR)
    source = get_object_or_404(access.notebook_sources(notebook), pk=source_id)
    try:
        unlink_source(notebook=notebook, source=source)
    except SourceNotRemovable as exc:  # the page offers no "remove" for these
        raise Http404(str(exc)) from exc
    note = _("“%(title)s” was removed from this notebook. It is still in your library.") % {
        "title": source.title
    }
    return _after_adding(request, notebook, [("info", note)])


@login_required
@require_POST
@credit_required
@rate_limited("upload")
def add_web_page(request: HtmxHttpRequest, notebook_id: int) -> HttpResponse:
    notebook = get_notebook_for_user(request, notebook_id, Role.EDITOR)
    form = WebPageForm(request.POST)
    if not form.is_valid():
        return bad_request(form)
    notes: list[tuple[str, str]] = []
    try:
        added = add_url(
            owner=request.user,
            notebook=notebook,
            url=form.cleaned_data["url"],
            pdf_capture=Preferences.of(request.user).pdf_capture,  # should it be a PDF
        )
    except UploadRejected as exc:
        notes.append(("error", str(exc)))
    else:
        if not added.created:
            notes.append(
                (
                    "info",
                    _(
                        "%(url)s is already in your library as “%(title)s”; "
                        "it was not fetched again."
                    )
                    % {"url": added.source.url, "title": added.source.title},
                )
            )

    return _after_adding(request, notebook, notes)


@login_required
@require_POST
def choose(request: HtmxHttpRequest, notebook_id: int) -> HttpResponse:
    """Tick sources (the form's `ticked`), or all, or none: the asker's questions and
    documents in this notebook use only the ticked ones, until they choose again."""
    notebook = get_notebook_for_user(request, notebook_id, Role.EDITOR)
    form = ChooseForm(request.POST)
    if not form.is_valid():
        return bad_request(form)
    if form.cleaned_data["all"]:
        ticked = [
            source.pk for source in source_choice(user=request.user, notebook=notebook).listed
        ]
    elif form.cleaned_data["none"]:
        ticked = []
    else:
        ticked = form.cleaned_data["ticked"]
    try:
        choose_sources(user=request.user, notebook=notebook, ticked=ticked)
    except UserFacingError as exc:
        raise Http404(str(exc)) from exc
    if not request.htmx:
        return redirect("notebooks:detail", notebook_id=notebook.pk)
    # The list, with the count above the question box and the Ask button (sources partial).
    return render(request, "notebooks/detail.html#sources", sources_context(request, notebook))
