"""The notebook pages: the list, a notebook's sources and chat, the passage behind a citation."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.db.models import Count
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST
from django_htmx.middleware import HtmxDetails

from billing.decorators import credit_required, credit_spent_response
from billing.services import CreditSpent
from generation.answering import answer_question
from ingest.services import SourceBusy, UploadRejected, add_source, add_url, reprocess_source
from notebooks.models import Citation, Conversation, Message, Notebook, NotebookSource
from notebooks.services import NotebookTitleTaken, create_notebook
from providers.errors import ProviderError


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails
    user: User  # every view here is @login_required


def _get_notebook_for_user(request: HtmxHttpRequest, notebook_id: int) -> Notebook:
    """The notebook if the signed-in user owns it; 404 otherwise, so that other people's
    notebooks cannot even be told apart from ones that do not exist."""
    return get_object_or_404(Notebook, pk=notebook_id, owner=request.user)


def _sources_context(notebook: Notebook) -> dict[str, Any]:
    links = NotebookSource.objects.filter(notebook=notebook).select_related("source")
    sources = [link.source for link in links.order_by("-added_at", "-id")]
    return {
        "notebook": notebook,
        "sources": sources,
        # The partial polls itself only while there is something left to watch.
        "polling": any(not source.is_finished for source in sources),
    }


def _render_list(request: HtmxHttpRequest, *, error: str = "", title: str = "") -> HttpResponse:
    notebooks = Notebook.objects.filter(owner=request.user).annotate(source_count=Count("sources"))
    return render(
        request,
        "notebooks/list.html",
        {"notebooks": notebooks, "error": error, "title": title},
    )


@login_required
@require_GET
def notebook_list(request: HtmxHttpRequest) -> HttpResponse:
    return _render_list(request)


@login_required
@require_POST
def create(request: HtmxHttpRequest) -> HttpResponse:
    title = request.POST.get("title", "")
    try:
        notebook = create_notebook(owner=request.user, title=title)
    except (NotebookTitleTaken, ValueError) as exc:
        return _render_list(request, error=str(exc), title=title)
    return redirect("notebooks:detail", notebook_id=notebook.pk)


@login_required
@require_GET
def detail(request: HtmxHttpRequest, notebook_id: int) -> HttpResponse:
    notebook = _get_notebook_for_user(request, notebook_id)
    conversation = notebook.conversations.first()
    chat: list[Message] = []
    if conversation is not None:
        chat = list(conversation.messages.prefetch_related("citations"))
    context = _sources_context(notebook)
    context.update({"conversation": conversation, "chat": chat})
    return render(request, "notebooks/detail.html", context)


@login_required
@require_GET
def sources(request: HtmxHttpRequest, notebook_id: int) -> HttpResponse:
    notebook = _get_notebook_for_user(request, notebook_id)
    return render(request, "notebooks/detail.html#sources", _sources_context(notebook))


@login_required
@require_POST
@credit_required
def upload(request: HtmxHttpRequest, notebook_id: int) -> HttpResponse:
    notebook = _get_notebook_for_user(request, notebook_id)
    files = request.FILES.getlist("files")
    notes: list[tuple[str, str]] = []  # (level, text) for each file that needs a word
    if not files:
        notes.append(("error", "Choose at least one file to upload."))
    for upload in files:
        try:
            added = add_source(owner=request.user, notebook=notebook, upload=upload)
        except UploadRejected as exc:
            notes.append(("error", str(exc)))
            continue
        if not added.created:
            notes.append(
                (
                    "info",
                    f"{upload.name} is already in your library as “{added.source.title}”; "
                    "it was not stored again.",
                )
            )

    if request.htmx:
        context = _sources_context(notebook)
        context.update({"upload_notes": notes, "oob": True})
        return render(request, "notebooks/detail.html#upload_result", context)
    for level, text in notes:
        messages.add_message(request, messages.ERROR if level == "error" else messages.INFO, text)
    return redirect("notebooks:detail", notebook_id=notebook.pk)


@login_required
@require_POST
@credit_required
def reprocess(request: HtmxHttpRequest, notebook_id: int, source_id: int) -> HttpResponse:
    """Retry a failed source or read a ready one again."""
    notebook = _get_notebook_for_user(request, notebook_id)
    source = get_object_or_404(notebook.sources, pk=source_id)
    try:
        reprocess_source(source=source)
    except SourceBusy as exc:
        messages.info(request, str(exc))
    if request.htmx:
        return render(request, "notebooks/detail.html#sources", _sources_context(notebook))
    return redirect("notebooks:detail", notebook_id=notebook.pk)


@login_required
@require_POST
@credit_required
def add_web_page(request: HtmxHttpRequest, notebook_id: int) -> HttpResponse:
    notebook = _get_notebook_for_user(request, notebook_id)
    notes: list[tuple[str, str]] = []
    try:
        added = add_url(owner=request.user, notebook=notebook, url=request.POST.get("url", ""))
    except UploadRejected as exc:
        notes.append(("error", str(exc)))
    else:
        if not added.created:
            notes.append(
                (
                    "info",
                    f"{added.source.url} is already in your library as “{added.source.title}”; "
                    "it was not fetched again.",
                )
            )

    if request.htmx:
        context = _sources_context(notebook)
        context.update({"upload_notes": notes, "oob": True})
        return render(request, "notebooks/detail.html#upload_result", context)
    for level, text in notes:
        messages.add_message(request, messages.ERROR if level == "error" else messages.INFO, text)
    return redirect("notebooks:detail", notebook_id=notebook.pk)


@login_required
@require_POST
@credit_required
def ask(request: HtmxHttpRequest, notebook_id: int) -> HttpResponse:
    notebook = _get_notebook_for_user(request, notebook_id)
    conversation = None
    if conversation_id := request.POST.get("conversation", "").strip():
        if not conversation_id.isdigit():
            raise Http404("No such conversation.")
        conversation = get_object_or_404(Conversation, pk=conversation_id, notebook=notebook)
    question = request.POST.get("question", "")

    try:
        answer = answer_question(
            user=request.user, notebook=notebook, question=question, conversation=conversation
        )
    except CreditSpent:  # spent by another request since the check above
        return credit_spent_response(request)
    except (ProviderError, ValueError) as exc:
        if not request.htmx:
            messages.error(request, str(exc))
            return redirect("notebooks:detail", notebook_id=notebook.pk)
        # A normal response, not an error status: htmx swaps only 2xx responses by
        # default, and the reader should see in the chat why there is no answer.
        context = {"notebook": notebook, "question": question.strip(), "error": str(exc)}
        return render(request, "notebooks/detail.html#exchange", context)

    if not request.htmx:
        return redirect("notebooks:detail", notebook_id=notebook.pk)
    context = {
        "notebook": notebook,
        "conversation": answer.conversation,
        "exchange": [answer.question, answer.message],
    }
    return render(request, "notebooks/detail.html#exchange", context)


def _highlight(cited: Citation) -> tuple[str, str, str] | None:
    """The cited chunk split around its quote (before, quote, after), or None when the
    chunk is gone or no longer holds the quote verbatim (it was re-processed)."""
    if cited.chunk is None or not cited.quote:
        return None
    start = cited.chunk.text.find(cited.quote)
    if start < 0:
        return None
    end = start + len(cited.quote)
    return cited.chunk.text[:start], cited.quote, cited.chunk.text[end:]


@login_required
@require_GET
def citation(request: HtmxHttpRequest, notebook_id: int, citation_id: int) -> HttpResponse:
    notebook = _get_notebook_for_user(request, notebook_id)
    cited = get_object_or_404(Citation, pk=citation_id, message__conversation__notebook=notebook)
    # A source removed from the notebook (or deleted) must not show its text here: the
    # reader would take it for a passage of this notebook.
    source_linked = (
        cited.source_id is not None
        and NotebookSource.objects.filter(notebook=notebook, source_id=cited.source_id).exists()
    )
    context = {
        "notebook": notebook,
        "citation": cited,
        "source_linked": source_linked,
        "passage_parts": _highlight(cited),
    }
    template = "notebooks/citation.html#passage" if request.htmx else "notebooks/citation.html"
    return render(request, template, context)
