"""Asking: a question answered at once or streamed as server-sent events, and one stored
message rendered."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Generator
from typing import Any

from asgiref.sync import sync_to_async
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import DatabaseError
from django.http import HttpResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import push_url

from billing.decorators import credit_required, credit_spent_response
from billing.services import CreditSpent
from generation.answering import Answer, Evidence, answer_question, stream_answer
from library.models import Source
from limits.decorators import rate_limited
from notebooks.forms import AskForm
from notebooks.models import Notebook
from notebooks.views.conversations import conversations_context, get_conversation
from ops.database import is_lost_database
from ops.outage import outage_message
from providers.errors import ProviderError
from retrieval.chosen_sources import AskedSources, sources_to_ask
from sharing import access
from sharing.models import Role
from texts import message_of, translated
from texts.errors import UserFacingError
from web.forms import bad_request
from web.notebook_pages import HtmxHttpRequest, get_notebook_for_user

logger = logging.getLogger(__name__)


def get_source_to_ask_about(notebook: Notebook, source_id: int | None) -> Source | None:
    """The source an "Ask about this" question is limited to: one of the notebook's, else
    404; None when the question is about the whole notebook."""
    if source_id is None:
        return None
    return get_object_or_404(access.notebook_sources(notebook), pk=source_id)


@login_required
@require_POST
@credit_required
@rate_limited("ask")
def ask(request: HtmxHttpRequest, notebook_id: int) -> HttpResponse:
    notebook = get_notebook_for_user(request, notebook_id, Role.EDITOR)
    form = AskForm(request.POST)
    if not form.is_valid():
        return bad_request(form)
    conversation = None
    if (conversation_id := form.cleaned_data["conversation"]) is not None:
        conversation = get_conversation(request, notebook, conversation_id, own=True)
    source = get_source_to_ask_about(notebook, form.cleaned_data["source"])
    question = form.cleaned_data["question"]
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
    context = conversations_context(request, notebook, answer.conversation)
    context.update({"notebook": notebook, "exchange": [answer.question, answer.message]})
    response = render(request, "notebooks/detail.html#exchange", context)
    # The address bar names the open conversation, so a reload shows it again.
    return push_url(
        response, reverse("notebooks:conversation", args=[notebook.pk, answer.conversation.pk])
    )


@login_required
@require_POST
@credit_required
@rate_limited("ask")
def ask_stream(request: HtmxHttpRequest, notebook_id: int) -> HttpResponseBase:
    """The answer as server-sent events: `evidence` the passages the model is given (source,
    page, the sentence that best matches), then `delta` events carry the text as the model
    writes it, then `done` names the stored message (whose rendered form replaces the raw text),
    or `error` says why there is none. A reader that hangs up stops the model call; a
    database lost on the way ends it with an `error` event saying so."""
    notebook = get_notebook_for_user(request, notebook_id, Role.EDITOR)
    form = AskForm(request.POST)
    if not form.is_valid():
        return bad_request(form)
    conversation = None
    if (conversation_id := form.cleaned_data["conversation"]) is not None:
        conversation = get_conversation(request, notebook, conversation_id, own=True)
    source = get_source_to_ask_about(notebook, form.cleaned_data["source"])
    asked = sources_to_ask(user=request.user, notebook=notebook)
    answers = stream_answer(
        user=request.user,
        notebook=notebook,
        question=form.cleaned_data["question"],
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
    context = conversations_context(request, notebook, shown.conversation)
    context.update({"notebook": notebook, "message": shown})
    return render(request, "notebooks/detail.html#streamed", context)
