"""The notebook pages: the list, a notebook's sources and chat, the passage behind a citation."""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import AsyncIterator, Generator
from typing import Any

from asgiref.sync import sync_to_async
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.db import DatabaseError
from django.db.models import Count, OuterRef, Subquery
from django.http import Http404, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.cache import patch_cache_control
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect

from billing.decorators import credit_required, credit_spent_response
from billing.services import CreditSpent
from citations.lookup import cited_passage
from generation import chat_style
from generation.answering import Answer, Evidence, answer_question, stream_answer
from ingest.notes import edit_note, make_note_a_source
from ingest.page_images import PageNotRendered, cited_page_png
from ingest.services import SourceBusy, UploadRejected, add_source, add_url, reprocess_source
from library.models import Preferences, Source
from limits.decorators import rate_limited
from notebooks import guides
from notebooks.models import (
    Citation,
    Conversation,
    Message,
    Note,
    Notebook,
    NoteCitation,
)
from notebooks.services import (
    SourceNotRemovable,
    create_note,
    create_notebook,
    delete_note,
    make_note_a_note_again,
    save_answer_as_note,
    unlink_source,
)
from ops import waiting
from ops.database import is_lost_database
from ops.outage import outage_message
from providers.errors import ProviderError
from retrieval.chosen_sources import AskedSources, choose_sources, source_choice, sources_to_ask
from sharing import access
from sharing.models import Membership, Role
from texts import message_of, translated
from texts.errors import UserFacingError
from web.notebook_pages import HtmxHttpRequest, get_notebook_for_user, render_citation

logger = logging.getLogger(__name__)


def _sources_context(request: HtmxHttpRequest, notebook: Notebook) -> dict[str, Any]:
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


def _capture_context(user: User) -> dict[str, Any]:
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


def _render_list(request: HtmxHttpRequest, *, error: str = "", title: str = "") -> HttpResponse:
    # The notebook's live links, as access.notebook_links counts them.
    live = Count("notebooksource", filter=access.live_link("notebooksource"))
    notebooks = Notebook.objects.filter(owner=request.user).annotate(source_count=live)
    shared = (
        access.shared_with(request.user)
        .select_related("owner")
        .annotate(
            source_count=live,
            my_role=Subquery(
                Membership.objects.filter(notebook=OuterRef("pk"), user=request.user).values(
                    "role"
                )[:1]
            ),
        )
    )
    return render(
        request,
        "notebooks/list.html",
        {"notebooks": notebooks, "shared": shared, "error": error, "title": title},
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
    except UserFacingError as exc:
        return _render_list(request, error=str(exc), title=title)
    return redirect("notebooks:detail", notebook_id=notebook.pk)


def _get_conversation(
    request: HtmxHttpRequest, notebook: Notebook, conversation_id: int | str, *, own: bool = False
) -> Conversation:
    """One of the notebook's conversations the user may read (the notebook already
    checked), or with `own` one they may ask in and change: their own; 404 otherwise."""
    if not str(conversation_id).isdigit():
        raise Http404("No such conversation.")
    if own:
        return get_object_or_404(
            access.own_conversations(request.user, notebook), pk=conversation_id
        )
    return get_object_or_404(
        access.visible_conversations(request.user, notebook), pk=conversation_id
    )


def _get_source_to_ask_about(notebook: Notebook, source_id: str) -> Source | None:
    """The source an "Ask about this" question is limited to: one of the notebook's, else
    404; None when the question is about the whole notebook."""
    source_id = source_id.strip()
    if not source_id:
        return None
    if not source_id.isdigit():
        raise Http404("No such source.")
    return get_object_or_404(access.notebook_sources(notebook), pk=source_id)


def _conversations_context(
    request: HtmxHttpRequest, notebook: Notebook, conversation: Conversation | None
) -> dict[str, Any]:
    conversations = list(
        access.visible_conversations(request.user, notebook)
        .select_related("user")
        .with_first_question()
    )
    # Two conversations that began with the same question are told apart by when.
    titles = Counter(item.display_title for item in conversations)
    return {
        "conversation": conversation,
        "conversations": conversations,
        "same_titles": {item.pk for item in conversations if titles[item.display_title] > 1},
    }


@login_required
@require_GET
def detail(
    request: HtmxHttpRequest,
    notebook_id: int,
    conversation_id: int | None = None,
    new: bool = False,
) -> HttpResponse:
    """The notebook page with one conversation open: the latest by default, the one in the
    URL, or none yet (`new`: the first question starts it)."""
    notebook = get_notebook_for_user(request, notebook_id)
    if new:
        conversation = None
    elif conversation_id is not None:
        conversation = _get_conversation(request, notebook, conversation_id)
    else:
        conversation = access.visible_conversations(request.user, notebook).first()
    chat: list[Message] = []
    if conversation is not None:
        chat = list(conversation.messages.prefetch_related("citations", "citations__chunk"))
    context = _sources_context(request, notebook)
    context.update(_conversations_context(request, notebook, conversation))
    context.update(
        {"chat": chat, "about": _get_source_to_ask_about(notebook, request.GET.get("about", ""))}
    )
    if notebook.role == Role.OWNER:
        context["members"] = list(notebook.memberships.select_related("user"))
    context.update(_capture_context(request.user))
    context.update(_notes_context(request, notebook))
    context.update(_style_context(notebook))
    return render(request, "notebooks/detail.html", context)


@login_required
@require_GET
def sources(request: HtmxHttpRequest, notebook_id: int) -> HttpResponse:
    notebook = get_notebook_for_user(request, notebook_id)
    return render(request, "notebooks/detail.html#sources", _sources_context(request, notebook))


def _after_adding(
    request: HtmxHttpRequest, notebook: Notebook, notes: list[tuple[str, str]]
) -> HttpResponse:
    """The response to an upload, an added web page or a removed source: the sources list
    and the notes (why a file was refused, that one was already in the library)."""
    if request.htmx:
        context = _sources_context(request, notebook)
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
    files = request.FILES.getlist("files")
    # add_source refuses an unknown mode with a message; none given: the person's default.
    pdf_capture = request.POST.get("pdf_capture") or Preferences.of(request.user).pdf_capture
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
        return render(request, "notebooks/detail.html#sources", _sources_context(request, notebook))
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
    notes: list[tuple[str, str]] = []
    try:
        added = add_url(
            owner=request.user,
            notebook=notebook,
            url=request.POST.get("url", ""),
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
@credit_required
@rate_limited("ask")
def ask(request: HtmxHttpRequest, notebook_id: int) -> HttpResponse:
    notebook = get_notebook_for_user(request, notebook_id, Role.EDITOR)
    conversation = None
    if conversation_id := request.POST.get("conversation", "").strip():
        conversation = _get_conversation(request, notebook, conversation_id, own=True)
    source = _get_source_to_ask_about(notebook, request.POST.get("source", ""))
    question = request.POST.get("question", "")
    asked = sources_to_ask(user=request.user, notebook=notebook)

    try:
        answer = answer_question(
            user=request.user,
            notebook=notebook,
            question=question,
            conversation=conversation,
            source=source,
            chosen_sources=_chosen_sources(asked, source),
            notebook_sources=asked.sources,
        )
    except CreditSpent:  # spent by another request since the check above
        return credit_spent_response(request)
    except (ProviderError, UserFacingError) as exc:
        if not request.htmx:
            messages.error(request, translated(message_of(exc)))
            return redirect("notebooks:detail", notebook_id=notebook.pk)
        # A normal response, not an error status: htmx swaps only 2xx responses by
        # default, and the reader should see in the chat why there is no answer.
        error = translated(message_of(exc))  # a model's failure, in the reader's language
        context = {"notebook": notebook, "question": question.strip(), "error": error}
        return render(request, "notebooks/detail.html#exchange", context)

    if not request.htmx:
        return redirect("notebooks:conversation", notebook.pk, answer.conversation.pk)
    context = _conversations_context(request, notebook, answer.conversation)
    context.update({"notebook": notebook, "exchange": [answer.question, answer.message]})
    response = render(request, "notebooks/detail.html#exchange", context)
    # The address bar names the open conversation, so a reload shows it again.
    response["HX-Push-Url"] = reverse(
        "notebooks:conversation", args=[notebook.pk, answer.conversation.pk]
    )
    return response


@login_required
@require_POST
@credit_required
@rate_limited("ask")
def ask_stream(request: HtmxHttpRequest, notebook_id: int) -> StreamingHttpResponse:
    """The answer as server-sent events: `evidence` the passages the model is given (source,
    page, the sentence that best matches), then `delta` events carry the text as the model
    writes it, then `done` names the stored message (whose rendered form replaces the raw text),
    or `error` says why there is none. A reader that hangs up stops the model call; a
    database lost on the way ends it with an `error` event saying so."""
    notebook = get_notebook_for_user(request, notebook_id, Role.EDITOR)
    conversation = None
    if conversation_id := request.POST.get("conversation", "").strip():
        conversation = _get_conversation(request, notebook, conversation_id, own=True)
    source = _get_source_to_ask_about(notebook, request.POST.get("source", ""))
    asked = sources_to_ask(user=request.user, notebook=notebook)
    answers = stream_answer(
        user=request.user,
        notebook=notebook,
        question=request.POST.get("question", ""),
        conversation=conversation,
        source=source,
        chosen_sources=_chosen_sources(asked, source),
        credit_checked=True,  # by @credit_required, a moment ago: not summed twice
        notebook_sources=asked.sources,  # read with the choice: not read twice
    )
    response = StreamingHttpResponse(
        _answer_events(notebook, answers), content_type="text/event-stream"
    )
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # a proxy (nginx) must pass each event on at once
    return response


def _chosen_sources(asked: AskedSources, about: Source | None) -> list[int] | None:
    """The sources a question searches: those the asker ticked (None: all); a question
    about one source ("Ask about this") asks it, ticked or not."""
    return None if about is not None else asked.searched


def _event(name: str, data: dict[str, Any]) -> str:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n"


def _next_or_none(
    answers: Generator[str | Evidence | Answer, None, None],
) -> str | Evidence | Answer | None:
    # StopIteration cannot travel through sync_to_async's future.
    return next(answers, None)


async def _answer_events(
    notebook: Notebook, answers: Generator[str | Evidence | Answer, None, None]
) -> AsyncIterator[str]:
    """The events of a streamed answer. An async iterator: under ASGI Django would read a
    sync one to the end before sending anything. The answer's generator does database work,
    so each step runs in the request's sync thread; closing this iterator (Django does when
    the client disconnects) closes the generator, which stores nothing (stream_answer)."""
    try:
        while True:
            try:
                item = await sync_to_async(_next_or_none)(answers)
            except (CreditSpent, ProviderError, UserFacingError) as exc:
                yield _event("error", {"error": translated(message_of(exc))})
                return
            except DatabaseError as exc:
                if not is_lost_database(exc):
                    raise
                # One line: the outage is the operator's news, its traceback nobody's.
                logger.warning("an answer in notebook %s lost the database: %s", notebook.pk, exc)
                yield _event("error", {"error": outage_message()})
                return
            if item is None:
                return
            if isinstance(item, Answer):
                yield _event(
                    "done",
                    {
                        "message": item.message.pk,
                        "conversation": item.conversation.pk,
                        "message_url": reverse(
                            "notebooks:message", args=[notebook.pk, item.message.pk]
                        ),
                        "conversation_url": reverse(
                            "notebooks:conversation", args=[notebook.pk, item.conversation.pk]
                        ),
                    },
                )
            elif isinstance(item, Evidence):
                yield _event("evidence", {"passages": item.passages})
            else:
                yield _event("delta", {"text": item})
    finally:
        try:
            await sync_to_async(answers.close)()
        except DatabaseError as exc:
            # Closing rolls back what the answer began, on the connection that was lost.
            if not is_lost_database(exc):
                raise


@login_required
@require_GET
def message(request: HtmxHttpRequest, notebook_id: int, message_id: int) -> HttpResponse:
    """One stored message, rendered; for htmx with the conversation list and the form's
    conversation id, which a streamed answer's first message may have just created."""
    notebook = get_notebook_for_user(request, notebook_id)
    shown = get_object_or_404(
        access.visible_messages(request.user, notebook)
        .prefetch_related("citations", "citations__chunk")
        .select_related("conversation"),
        pk=message_id,
    )
    if not request.htmx:
        return render(request, "notebooks/_message.html", {"message": shown})
    context = _conversations_context(request, notebook, shown.conversation)
    context.update({"notebook": notebook, "message": shown})
    return render(request, "notebooks/detail.html#streamed", context)


@login_required
@require_POST
def rename_conversation(
    request: HtmxHttpRequest, notebook_id: int, conversation_id: int
) -> HttpResponse:
    """Give a conversation a title; an empty one names it by its first question again."""
    notebook = get_notebook_for_user(request, notebook_id)
    conversation = _get_conversation(request, notebook, conversation_id, own=True)
    conversation.rename(request.POST.get("title", ""))
    return redirect("notebooks:conversation", notebook.pk, conversation.pk)


@login_required
@require_POST
def delete_conversation(
    request: HtmxHttpRequest, notebook_id: int, conversation_id: int
) -> HttpResponse:
    notebook = get_notebook_for_user(request, notebook_id)
    _get_conversation(request, notebook, conversation_id, own=True).delete()
    url = reverse("notebooks:detail", args=[notebook.pk])
    return HttpResponseClientRedirect(url) if request.htmx else redirect(url)


@login_required
@require_POST
def post_conversation(
    request: HtmxHttpRequest, notebook_id: int, conversation_id: int
) -> HttpResponse:
    """Post one's conversation to the notebook (everyone it is shared with may read it), or
    make it private again."""
    notebook = get_notebook_for_user(request, notebook_id)
    conversation = _get_conversation(request, notebook, conversation_id, own=True)
    conversation.post(request.POST.get("posted") == "1")
    return redirect("notebooks:conversation", notebook.pk, conversation.pk)


@login_required
@require_GET
def citation(request: HtmxHttpRequest, notebook_id: int, citation_id: int) -> HttpResponse:
    notebook = get_notebook_for_user(request, notebook_id)
    cited = get_object_or_404(
        Citation,
        pk=citation_id,
        message__conversation__in=access.visible_conversations(request.user, notebook),
    )
    return render_citation(
        request,
        notebook,
        cited,
        url=reverse("notebooks:citation", args=[notebook.pk, cited.pk]),
        image_query=f"citation={cited.pk}",
    )


@login_required
@require_GET
def page_image(
    request: HtmxHttpRequest, notebook_id: int, source_id: int, page: int
) -> HttpResponse:
    """A page of a PDF in the notebook as a PNG; `?citation=<id>` (or `note_citation`,
    `document_citation`) highlights that citation's quote when it cites this page."""
    notebook = get_notebook_for_user(request, notebook_id)
    source = get_object_or_404(access.notebook_sources(notebook), pk=source_id)
    cited = cited_passage(request.user, notebook, request.GET)
    try:
        png = cited_page_png(source, page, cited)
    except PageNotRendered as exc:
        raise Http404("This page could not be rendered.") from exc
    response = HttpResponse(png, content_type="image/png")
    # The file behind a source never changes (its name is its hash), but access can end.
    patch_cache_control(response, private=True, max_age=3600)
    return response


# Choosing the sources ------------------------------------------------------------------


@login_required
@require_POST
def choose(request: HtmxHttpRequest, notebook_id: int) -> HttpResponse:
    """Tick sources (the form's `ticked`), or all, or none: the asker's questions and
    documents in this notebook use only the ticked ones, until they choose again."""
    notebook = get_notebook_for_user(request, notebook_id, Role.EDITOR)
    if "all" in request.POST:
        ticked = [
            source.pk for source in source_choice(user=request.user, notebook=notebook).listed
        ]
    elif "none" in request.POST:
        ticked = []
    else:
        values = request.POST.getlist("ticked")
        if not all(value.isdigit() for value in values):
            raise Http404("No such source.")
        ticked = [int(value) for value in values]
    try:
        choose_sources(user=request.user, notebook=notebook, ticked=ticked)
    except UserFacingError as exc:
        raise Http404(str(exc)) from exc
    if not request.htmx:
        return redirect("notebooks:detail", notebook_id=notebook.pk)
    # The list, with the count above the question box and the Ask button (sources partial).
    return render(request, "notebooks/detail.html#sources", _sources_context(request, notebook))


# Chat style ----------------------------------------------------------------------------


def _style_context(notebook: Notebook) -> dict[str, Any]:
    return {
        "goal_choices": Notebook.ChatGoal.choices,
        "length_choices": Notebook.ChatLength.choices,
        "max_instructions": chat_style.MAX_INSTRUCTIONS,
    }


@login_required
@require_POST
def chat_style_view(request: HtmxHttpRequest, notebook_id: int) -> HttpResponse:
    """How the chat answers in this notebook, for everyone who asks: owner and editors."""
    notebook = get_notebook_for_user(request, notebook_id, Role.EDITOR)
    try:
        chat_style.set_chat_style(
            notebook=notebook,
            goal=request.POST.get("goal", ""),
            length=request.POST.get("length", ""),
            instructions=request.POST.get("instructions", ""),
        )
    except UserFacingError as exc:
        messages.error(request, str(exc))
    else:
        messages.info(request, _("The chat style was saved."))
    # Back to the page it was saved from (the conversation that was open), never elsewhere.
    back = request.POST.get("next", "")
    notebook_url = reverse("notebooks:detail", args=[notebook.pk])
    if back.startswith(notebook_url) and url_has_allowed_host_and_scheme(
        back, allowed_hosts={request.get_host()}
    ):
        return redirect(back)
    return redirect(notebook_url)


# Notes --------------------------------------------------------------------------------


def _notes_context(request: HtmxHttpRequest, notebook: Notebook, **extra: Any) -> dict[str, Any]:
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
    context = _notes_context(request, notebook, **extra)
    if extra.get("with_sources"):
        context.update(_sources_context(request, notebook))
        context["oob"] = True
    return render(request, "notebooks/detail.html#notes_changed", context)


@login_required
@require_GET
def notes(request: HtmxHttpRequest, notebook_id: int) -> HttpResponse:
    """The notes panel (htmx polls it while a note is being made a source)."""
    notebook = get_notebook_for_user(request, notebook_id)
    return render(request, "notebooks/detail.html#notes", _notes_context(request, notebook))


@login_required
@require_POST
def new_note(request: HtmxHttpRequest, notebook_id: int) -> HttpResponse:
    notebook = get_notebook_for_user(request, notebook_id, Role.EDITOR)
    try:
        create_note(
            user=request.user,
            notebook=notebook,
            content=request.POST.get("content", ""),
            title=request.POST.get("title", ""),
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
        try:
            edit_note(
                note=shown,
                content=request.POST.get("content", ""),
                title=request.POST.get("title", ""),
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
    shown.post(request.POST.get("posted") == "1")
    return _after_note(request, notebook)


@login_required
@require_POST
@credit_required
@rate_limited("upload")
def note_source(request: HtmxHttpRequest, notebook_id: int, note_id: int) -> HttpResponse:
    """Make the note a source of the notebook (`source=1`), or a note only again."""
    notebook = get_notebook_for_user(request, notebook_id)
    shown = _get_note(request, notebook, note_id, own=True)
    if request.POST.get("source") == "1":
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


@login_required
@require_GET
def note_citation(
    request: HtmxHttpRequest, notebook_id: int, note_citation_id: int
) -> HttpResponse:
    """The passage behind an [n] of a note, in the same panel as an answer's."""
    notebook = get_notebook_for_user(request, notebook_id)
    cited = get_object_or_404(
        NoteCitation,
        pk=note_citation_id,
        note__in=access.visible_notes(request.user, notebook),
    )
    return render_citation(
        request,
        notebook,
        cited,
        url=reverse("notebooks:note_citation", args=[notebook.pk, cited.pk]),
        image_query=f"note_citation={cited.pk}",
    )
