"""The studio: a notebook's generated documents, made, shown, retried and deleted.

Every view goes through the notebook access helper first: another person's notebook, and
so its documents, is a 404.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models.fields.files import FieldFile
from django.http import FileResponse, Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.text import slugify
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseClientRedirect

from billing.decorators import credit_required
from generation.documents.models import DocumentCitation, GeneratedDocument, SlideRevision
from generation.documents.services import (
    DocumentBusy,
    NoSuchQuestion,
    NoSuchSlide,
    check_quiz_answer,
    delete_document,
    document_svg,
    request_document,
    request_slide_revision,
    retry_document,
)
from generation.documents.services import table_csv as make_table_csv
from generation.forms import (
    DeleteForm,
    DocumentForm,
    DocumentPageForm,
    MediaForm,
    QuizAnswerForm,
    RevisionForm,
)
from limits.decorators import rate_limited
from notebooks.models import Notebook
from providers.chat import chat_available
from retrieval.chosen_sources import source_choice
from sharing import access
from sharing.models import Role
from texts.errors import UserFacingError
from web.forms import bad_request
from web.notebook_pages import HtmxHttpRequest, get_notebook_for_user, render_citation


def _get_document(
    request: HtmxHttpRequest, notebook_id: int, document_id: int, *, manage: bool = False
) -> tuple[Notebook, GeneratedDocument]:
    """A document of a notebook the user may read; with `manage`, one they may retry or
    delete (they made it, or own the notebook; sharing/access.py)."""
    notebook = get_notebook_for_user(request, notebook_id, Role.EDITOR if manage else Role.VIEWER)
    document = get_object_or_404(
        GeneratedDocument.objects.prefetch_related("citations", "citations__chunk"),
        pk=document_id,
        notebook=notebook,
    )
    if manage and not access.may_manage_document(request.user, notebook, document):
        raise PermissionDenied(
            _("Only whoever made this document, or the notebook's owner, can do this.")
        )
    return notebook, document


def _panel(request: HtmxHttpRequest, notebook: Notebook, *, error: str = "") -> HttpResponse:
    return render(
        request, "generation/_studio.html#documents", {"notebook": notebook, "studio_error": error}
    )


@login_required
@require_GET
def panel(request: HtmxHttpRequest, notebook_id: int) -> HttpResponse:
    """The list of documents (htmx polls it while one is being made)."""
    return _panel(request, get_notebook_for_user(request, notebook_id))


@login_required
@require_POST
@credit_required
@rate_limited("generate")
def create(request: HtmxHttpRequest, notebook_id: int) -> HttpResponse:
    notebook = get_notebook_for_user(request, notebook_id, Role.EDITOR)
    form = DocumentForm(request.POST)
    if not form.is_valid():
        return bad_request(form)
    asked = form.cleaned_data
    audio = asked["kind"] == GeneratedDocument.Kind.AUDIO
    video = asked["kind"] == GeneratedDocument.Kind.VIDEO
    try:
        request_document(
            user=request.user,
            notebook=notebook,
            kind=asked["kind"],
            language=asked["language"],
            chosen_sources=source_choice(user=request.user, notebook=notebook).searched,
            audio_format=asked["audio_format"] if audio else "",
            length=asked["length"] if audio else "",
            video_format=asked["video_format"] if video else "",
        )
    except UserFacingError as exc:
        if request.htmx:
            return _panel(request, notebook, error=str(exc))
        messages.error(request, str(exc))
    if request.htmx:
        return _panel(request, notebook)
    return redirect("notebooks:detail", notebook_id=notebook.pk)


@login_required
@require_GET
def document(request: HtmxHttpRequest, notebook_id: int, document_id: int) -> HttpResponse:
    notebook, shown = _get_document(request, notebook_id, document_id)
    context = {
        "notebook": notebook,
        "document": shown,
        "chat_model": chat_available(),
        "may_revise": _may_revise(request, notebook, shown),
    }
    if request.htmx and DocumentPageForm(request.GET).polled():  # polled while it is made
        response = render(request, "generation/document.html#status", context)
        if shown.is_finished:
            response["HX-Refresh"] = "true"  # made meanwhile: the whole page shows it
        return response
    return render(request, "generation/document.html", context)


@login_required
@require_POST
@credit_required
@rate_limited("generate")
def retry(request: HtmxHttpRequest, notebook_id: int, document_id: int) -> HttpResponse:
    notebook, shown = _get_document(request, notebook_id, document_id, manage=True)
    try:
        retry_document(document=shown, user=request.user)
    except DocumentBusy as exc:
        messages.info(request, str(exc))
    if request.htmx:
        return _panel(request, notebook)
    return redirect("studio:document", notebook.pk, shown.pk)


@login_required
@require_POST
def delete(request: HtmxHttpRequest, notebook_id: int, document_id: int) -> HttpResponse:
    notebook, shown = _get_document(request, notebook_id, document_id, manage=True)
    form = DeleteForm(request.POST)
    if not form.is_valid():
        return bad_request(form)
    delete_document(document=shown)
    if request.htmx and form.cleaned_data["from"] == "panel":
        return _panel(request, notebook)
    url = reverse("notebooks:detail", args=[notebook.pk])
    return HttpResponseClientRedirect(url) if request.htmx else redirect(url)


def _ready(shown: GeneratedDocument, kind: str) -> None:
    if shown.kind != kind or shown.status != GeneratedDocument.Status.READY:
        raise Http404(f"This document is not a ready {kind}.")


def _filename(shown: GeneratedDocument, suffix: str) -> str:
    return f"{slugify(shown.title)[:80] or shown.kind}.{suffix}"


@login_required
@require_GET
def table_csv(request: HtmxHttpRequest, notebook_id: int, document_id: int) -> HttpResponse:
    _notebook, shown = _get_document(request, notebook_id, document_id)
    _ready(shown, GeneratedDocument.Kind.TABLE)
    response = HttpResponse(make_table_csv(document=shown), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{_filename(shown, "csv")}"'
    return response


@login_required
@require_GET
def drawing_svg(request: HtmxHttpRequest, notebook_id: int, document_id: int) -> HttpResponse:
    _notebook, shown = _get_document(request, notebook_id, document_id)
    if shown.kind not in {GeneratedDocument.Kind.MINDMAP, GeneratedDocument.Kind.INFOGRAPHIC}:
        raise Http404("This document has no drawing.")
    _ready(shown, shown.kind)
    response = HttpResponse(document_svg(document=shown), content_type="image/svg+xml")
    response["Content-Disposition"] = f'attachment; filename="{_filename(shown, "svg")}"'
    # An SVG opened on its own could run script if it held any; ours holds none, and this
    # keeps it so whatever a label says.
    response["Content-Security-Policy"] = "default-src 'none'; style-src 'unsafe-inline'"
    return response


def _media(
    request: HtmxHttpRequest,
    shown: GeneratedDocument,
    stored: FieldFile,
    content_type: str,
    suffix: str,
) -> FileResponse:
    """An overview's sound or film, played in the page or downloaded (?download)."""
    if not stored:
        raise Http404("This overview has no such file.")
    return FileResponse(
        stored.open("rb"),
        content_type=content_type,
        as_attachment=MediaForm(request.GET).as_attachment(),
        filename=_filename(shown, suffix),
    )


@login_required
@require_GET
def audio(request: HtmxHttpRequest, notebook_id: int, document_id: int) -> FileResponse:
    _notebook, shown = _get_document(request, notebook_id, document_id)
    _ready(shown, GeneratedDocument.Kind.AUDIO)
    return _media(request, shown, shown.audio, "audio/mpeg", "mp3")


DECK_FILES = {
    "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    "pdf": "application/pdf",
}


@login_required
@require_GET
def deck_file(
    request: HtmxHttpRequest, notebook_id: int, document_id: int, suffix: str
) -> FileResponse:
    """A slide deck's PPTX or PDF export."""
    _notebook, shown = _get_document(request, notebook_id, document_id)
    _ready(shown, GeneratedDocument.Kind.SLIDES)
    stored = shown.pptx if suffix == "pptx" else shown.pdf
    if not stored:
        raise Http404("This deck has no such export.")
    return FileResponse(
        stored.open("rb"),
        content_type=DECK_FILES[suffix],
        as_attachment=True,
        filename=_filename(shown, suffix),
    )


@login_required
@require_GET
def video(request: HtmxHttpRequest, notebook_id: int, document_id: int) -> FileResponse:
    _notebook, shown = _get_document(request, notebook_id, document_id)
    _ready(shown, GeneratedDocument.Kind.VIDEO)
    return _media(request, shown, shown.video, "video/mp4", "mp4")


def _may_revise(request: HtmxHttpRequest, notebook: Notebook, shown: GeneratedDocument) -> bool:
    """A slide is revised by the chat model (without one, the page offers no revision), by
    whoever may manage the deck."""
    return (
        shown.kind == GeneratedDocument.Kind.SLIDES
        and getattr(notebook, "role", "") != Role.VIEWER
        and access.may_manage_document(request.user, notebook, shown)
        and chat_available()
    )


def _revision_part(
    request: HtmxHttpRequest,
    notebook: Notebook,
    shown: GeneratedDocument,
    number: int,
    revision: SlideRevision | None,
    *,
    error: str = "",
) -> HttpResponse:
    context = {
        "error": error,
        "notebook": notebook,
        "document": shown,
        "number": number,
        "revision": revision,
        "may_revise": _may_revise(request, notebook, shown),
    }
    return render(request, "generation/_slide_revision.html", context)


@login_required
@require_POST
@credit_required
@rate_limited("generate")
def revise(
    request: HtmxHttpRequest, notebook_id: int, document_id: int, number: int
) -> HttpResponse:
    """Queue one slide of a deck to be rewritten as the person asks; the slide says
    "revising…" until a worker has done it (`revision`), the rest of the deck stays."""
    notebook, shown = _get_document(request, notebook_id, document_id, manage=True)
    form = RevisionForm(request.POST)
    if not form.is_valid():
        return bad_request(form)
    revision = None
    try:
        revision = request_slide_revision(
            document=shown,
            number=number,
            instruction=form.cleaned_data["instruction"],
            user=request.user,
        )
    except NoSuchSlide as exc:
        raise Http404(str(exc)) from exc
    except UserFacingError as exc:
        if request.htmx:
            return _revision_part(request, notebook, shown, number, None, error=str(exc))
        messages.error(request, str(exc))
    if request.htmx:
        return _revision_part(request, notebook, shown, number, revision)
    url = reverse("studio:document", args=[notebook.pk, shown.pk]) + f"#slide-{number}"
    return redirect(url)


@login_required
@require_GET
def revision(
    request: HtmxHttpRequest, notebook_id: int, document_id: int, revision_id: int
) -> HttpResponse:
    """A slide's revision, polled by its slide while it is under way; once the slide is
    revised the page loads again to show it."""
    notebook, shown = _get_document(request, notebook_id, document_id)
    asked = get_object_or_404(SlideRevision, pk=revision_id, document=shown)
    if request.htmx and asked.status == SlideRevision.Status.READY:
        url = reverse("studio:document", args=[notebook.pk, shown.pk]) + f"#slide-{asked.number}"
        return HttpResponseClientRedirect(url)
    return _revision_part(request, notebook, shown, asked.number, asked)


@login_required
@require_POST
def quiz_answer(
    request: HtmxHttpRequest, notebook_id: int, document_id: int, number: int
) -> HttpResponse:
    """Check one answer on the server: the page never holds the answers beforehand."""
    notebook, shown = _get_document(request, notebook_id, document_id)
    _ready(shown, GeneratedDocument.Kind.QUIZ)
    form = QuizAnswerForm(request.POST)
    if not form.is_valid():
        return bad_request(form)
    context: dict[str, object] = {"notebook": notebook, "document": shown, "number": number}
    try:
        context["result"] = check_quiz_answer(
            document=shown, number=number, response=form.cleaned_data["answer"]
        )
    except NoSuchQuestion as exc:
        raise Http404(str(exc)) from exc
    except UserFacingError as exc:  # an answer of the wrong form: say so beside the question
        context["answer_error"] = str(exc)
    if request.htmx:
        return render(request, "generation/document.html#quiz_result", context)
    return render(request, "generation/quiz_answer.html", context)


@login_required
@require_GET
def citation(
    request: HtmxHttpRequest, notebook_id: int, document_id: int, citation_id: int
) -> HttpResponse:
    """The passage behind a document's [n], in the same panel as an answer's."""
    notebook, shown = _get_document(request, notebook_id, document_id)
    cited = get_object_or_404(DocumentCitation, pk=citation_id, document=shown)
    return render_citation(
        request,
        notebook,
        cited,
        url=reverse("studio:citation", args=[notebook.pk, shown.pk, cited.pk]),
        image_query=f"document_citation={cited.pk}",
    )
