"""Asking a notebook (JSON, or streamed as server-sent events) and its conversations."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Generator
from typing import Any

from django.http import StreamingHttpResponse
from django.shortcuts import get_object_or_404
from ninja import Router, Status

from api import answers
from api.auth import WRITE, ApiRequest
from api.errors import BILLED, COMMON, ApiError, ErrorOut
from api.v1.common import billed, get_notebook
from api.v1.schemas import (
    AnswerOut,
    AskIn,
    ConversationDetailOut,
    ConversationOut,
    ConversationPatch,
    NoteOut,
    message_out,
    note_out,
)
from billing.services import CreditSpent, credit_spent_message
from generation.answering import Answer, Evidence
from notebooks.models import Conversation
from notebooks.services import save_answer_as_note
from providers.errors import ProviderError
from sharing import access
from sharing.models import Role
from texts import message_of, translated
from texts.errors import UserFacingError

router = Router(tags=["chat"])


@router.post(
    "/notebooks/{notebook_id}/ask",
    response={200: AnswerOut, **BILLED},
    auth=WRITE,
    summary="Ask a question; the answer with its citations",
)
def ask(request: ApiRequest, notebook_id: int, payload: AskIn) -> dict:
    notebook = get_notebook(request, notebook_id, Role.EDITOR)
    conversation, source = answers.conversation_and_source(
        request.user, notebook, payload.conversation, payload.source
    )
    billed(request, "ask")
    answer = answers.ask(
        user=request.user,
        notebook=notebook,
        question=payload.question,
        conversation=conversation,
        source=source,
    )
    return {
        "conversation": answer.conversation.pk,
        "question": message_out(answer.question),
        "answer": message_out(answer.message),
        "passages": [answers.passage_out(n, hit) for n, hit in enumerate(answer.passages, 1)],
    }


STREAM_DESCRIPTION = """Server-sent events, in this order:
`evidence` `{"passages": [...]}` (the retrieved passages, before the first word),
`delta` `{"text": "..."}` (the answer as it is written, any number),
`citations` `{"conversation": id, "message": {...}}` (the stored answer: its text with the
[n] markers renumbered, and its verified citations), or instead `error`
`{"code": "...", "message": "..."}`."""


# One server-sent event, as it is read off the stream (OpenAPI 3.2 calls this itemSchema).
SSE_EVENT = {
    "type": "object",
    "properties": {
        "event": {"type": "string", "enum": ["evidence", "delta", "citations", "error"]},
        "data": {"type": "string", "description": "a JSON object"},
    },
    "required": ["data"],
}


@router.post(
    "/notebooks/{notebook_id}/ask/stream",
    response={200: None, **BILLED},
    auth=WRITE,
    summary="Ask a question; the answer streamed as server-sent events",
    description=STREAM_DESCRIPTION,
    openapi_extra={
        "responses": {
            200: {
                "description": "text/event-stream",
                "content": {"text/event-stream": {"schema": SSE_EVENT}},
            }
        }
    },
)
def ask_stream(request: ApiRequest, notebook_id: int, payload: AskIn) -> StreamingHttpResponse:
    notebook = get_notebook(request, notebook_id, Role.EDITOR)
    conversation, source = answers.conversation_and_source(
        request.user, notebook, payload.conversation, payload.source
    )
    billed(request, "ask")
    items = answers.ask_streamed(
        user=request.user,
        notebook=notebook,
        question=payload.question,
        conversation=conversation,
        source=source,
    )
    response = StreamingHttpResponse(_events(items), content_type="text/event-stream")
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"
    return response


def _event(name: str, data: dict[str, Any]) -> str:
    return f"event: {name}\ndata: {json.dumps(data, default=str)}\n\n"


async def _events(items: Generator[answers.Item, None, None]) -> AsyncIterator[str]:
    try:
        async for item in answers.relay(items):
            if isinstance(item, Evidence):
                passages = [answers.passage_out(n, hit) for n, hit in enumerate(item.hits, 1)]
                yield _event("evidence", {"passages": passages})
            elif isinstance(item, Answer):
                message = await _stored(item)
                yield _event(
                    "citations", {"conversation": item.conversation.pk, "message": message}
                )
            else:
                yield _event("delta", {"text": item})
    except CreditSpent:
        yield _event("error", {"code": "credit_spent", "message": credit_spent_message()})
    except ProviderError as exc:
        yield _event("error", {"code": "model_failed", "message": translated(message_of(exc))})
    except UserFacingError as exc:
        yield _event("error", {"code": "refused", "message": translated(message_of(exc))})


async def _stored(answer: Answer) -> dict[str, Any]:
    from asgiref.sync import sync_to_async

    return await sync_to_async(message_out)(answer.message)


def _conversation_out(conversation: Conversation, user_id: int) -> dict[str, Any]:
    return {
        "id": conversation.pk,
        "title": conversation.title,
        "posted": conversation.posted,
        "mine": conversation.user_id == user_id,
        "created_at": conversation.created_at,
    }


@router.get(
    "/notebooks/{notebook_id}/conversations",
    response={200: list[ConversationOut], **COMMON},
    summary="Your conversations and those posted to the notebook",
)
def conversations(request: ApiRequest, notebook_id: int) -> list[dict]:
    notebook = get_notebook(request, notebook_id)
    return [
        _conversation_out(conversation, request.user.pk)
        for conversation in access.visible_conversations(request.user, notebook)
    ]


@router.get(
    "/notebooks/{notebook_id}/conversations/{conversation_id}",
    response={200: ConversationDetailOut, **COMMON},
    summary="A conversation's messages with their citations",
)
def conversation(request: ApiRequest, notebook_id: int, conversation_id: int) -> dict:
    notebook = get_notebook(request, notebook_id)
    shown = get_object_or_404(
        access.visible_conversations(request.user, notebook), pk=conversation_id
    )
    messages = shown.messages.prefetch_related("citations", "citations__chunk")
    return {
        **_conversation_out(shown, request.user.pk),
        "messages": [message_out(message) for message in messages],
    }


@router.delete(
    "/notebooks/{notebook_id}/conversations/{conversation_id}",
    response={204: None, **COMMON},
    auth=WRITE,
    summary="Delete a conversation of yours",
)
def delete_conversation(request: ApiRequest, notebook_id: int, conversation_id: int) -> Status:
    notebook = get_notebook(request, notebook_id)
    get_object_or_404(access.own_conversations(request.user, notebook), pk=conversation_id).delete()
    return Status(204, None)


@router.patch(
    "/notebooks/{notebook_id}/conversations/{conversation_id}",
    response={200: ConversationOut, **COMMON},
    auth=WRITE,
    summary="Rename a conversation of yours, or post it to the notebook (or take it back)",
)
def change_conversation(
    request: ApiRequest, notebook_id: int, conversation_id: int, payload: ConversationPatch
) -> dict:
    notebook = get_notebook(request, notebook_id)
    shown = get_object_or_404(access.own_conversations(request.user, notebook), pk=conversation_id)
    if payload.title is not None:
        shown.rename(payload.title)
    if payload.posted is not None:
        shown.post(payload.posted)
    return _conversation_out(shown, request.user.pk)


@router.post(
    "/notebooks/{notebook_id}/messages/{message_id}/note",
    response={201: NoteOut, 409: ErrorOut, **COMMON},
    auth=WRITE,
    summary="Save an answer you may read to a note of yours, citations and all",
)
def save_to_note(request: ApiRequest, notebook_id: int, message_id: int) -> Status:
    notebook = get_notebook(request, notebook_id, Role.EDITOR)
    answer = get_object_or_404(
        access.visible_messages(request.user, notebook)
        .select_related("conversation")
        .prefetch_related("citations"),
        pk=message_id,
    )
    try:
        note = save_answer_as_note(user=request.user, message=answer)
    except UserFacingError as exc:
        raise ApiError(409, "not_an_answer", str(exc)) from exc
    return Status(201, note_out(note, request.user.pk))
