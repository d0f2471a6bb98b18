"""The OpenAI-compatible endpoints: /v1/models lists the notebooks the token's user may ask
in, as models named `notebook-<id>`; /v1/chat/completions answers the last user message
from that notebook, the messages before it read as the conversation (as the chat page reads
its turns), streamed or not, billed and limited as any question. The answer keeps its [n]
markers; its citations travel in the extension field `citations` (docs/api.md)."""

from __future__ import annotations

import json
import re
import time
from collections.abc import AsyncIterator, Generator
from dataclasses import dataclass
from typing import Any

from asgiref.sync import sync_to_async
from django.db.models import Sum
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from api import answers
from api.auth import token_user
from api.errors import ApiError
from api.v1.common import billed
from api.v1.schemas import citation_out
from billing.models import Usage
from billing.services import CreditSpent, credit_spent_message
from generation.answering import Answer, Evidence, Turn
from notebooks.models import Message, Notebook
from providers.errors import ProviderError
from sharing import access
from sharing.models import Role
from texts import message_of, translated
from texts.errors import UserFacingError

MODEL = re.compile(r"^notebook-(\d{1,18})$")
_TYPES = {400: "invalid_request_error", 401: "authentication_error", 402: "insufficient_quota"}
_TYPES |= {403: "permission_error", 404: "not_found_error", 429: "rate_limit_error"}


def _error(status: int, code: str, message: str, param: str | None = None) -> JsonResponse:
    """An error as OpenAI's clients read it (`error.message`, `.type`, `.code`, `.param`)."""
    kind = _TYPES.get(status, "api_error")
    body = {"error": {"message": message, "type": kind, "code": code, "param": param}}
    return JsonResponse(body, status=status)


def _user(request: HttpRequest, *, write: bool) -> Any:
    header = request.headers.get("Authorization", "")
    scheme, _, secret = header.partition(" ")
    if scheme.lower() != "bearer" or not secret:
        raise ApiError(401, "not_authenticated", "Send a token: Authorization: Bearer <token>.")
    return token_user(request, secret.strip(), write=write)


def _model_out(notebook: Notebook) -> dict[str, Any]:
    return {
        "id": f"notebook-{notebook.pk}",
        "object": "model",
        "created": int(notebook.created_at.timestamp()),
        "owned_by": notebook.owner.get_username(),
        "name": notebook.title,
    }


@csrf_exempt
@require_GET
def models(request: HttpRequest) -> HttpResponse:
    try:
        user = _user(request, write=False)
    except ApiError as exc:
        return _error(exc.status, exc.code, exc.message)
    notebooks = access.editable_notebooks(user).select_related("owner").order_by("pk")
    return JsonResponse({"object": "list", "data": [_model_out(n) for n in notebooks]})


@dataclass(frozen=True)
class _Asked:
    question: str  # the last message's text
    turns: list[Turn]  # the user and assistant messages before it, oldest first
    notebook_id: int
    stream: bool


def _text(content: Any) -> str | None:
    """A message's text: a string, or the text of its content parts; None for neither."""
    if isinstance(content, list):
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return content if isinstance(content, str) else None


def _asked(body: Any) -> _Asked:
    """The question (the last message, the user's), the conversation before it as the
    client holds it, the notebook's id and whether to stream; ApiError naming the
    parameter at fault. The client's system messages are left out: Loupe's own system
    prompt (the citing rules and the notebook's chat style) is the one the model gets."""
    if not isinstance(body, dict):
        raise ApiError(400, "invalid_request", "The body must be a JSON object.")
    model = body.get("model")
    match = MODEL.match(model) if isinstance(model, str) else None
    if match is None:
        raise ApiError(
            404, "model_not_found", "Use a model from /v1/models: notebook-<id>.", "model"
        )
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise ApiError(400, "invalid_messages", "messages must be a non-empty list.", "messages")
    if not all(isinstance(message, dict) for message in messages):
        raise ApiError(400, "invalid_messages", "Each message must be an object.", "messages")
    if messages[-1].get("role") != "user":
        raise ApiError(
            400, "invalid_messages", "The last message must have the role user.", "messages"
        )
    question = _text(messages[-1].get("content"))
    if question is None or not question.strip():
        raise ApiError(400, "invalid_messages", "The last user message has no text.", "messages")
    turns = []
    for number, message in enumerate(messages[:-1]):
        if message.get("role") not in ("user", "assistant"):
            continue
        content = message.get("content")
        text = _text(content)
        if text is None and content is not None:
            raise ApiError(
                400, "invalid_messages", f"messages[{number}] has no text content.", "messages"
            )
        # An assistant's tool call has no content: nothing of it to read.
        if text and text.strip():
            turns.append((str(message["role"]), text))
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise ApiError(400, "invalid_stream", "stream must be true or false.", "stream")
    return _Asked(question, turns, int(match.group(1)), stream)


@csrf_exempt
@require_POST
def chat_completions(request: HttpRequest) -> HttpResponseBase:
    try:
        user = _user(request, write=True)
        try:
            body = json.loads(request.body)
        except (ValueError, UnicodeDecodeError):
            raise ApiError(400, "invalid_json", "The body is not JSON.") from None
        asked = _asked(body)
        try:
            notebook = access.get_notebook(user, asked.notebook_id, Role.EDITOR)
        except Http404:
            raise ApiError(
                404, "model_not_found", f"No model notebook-{asked.notebook_id}.", "model"
            ) from None
        conversation_id = body.get("conversation")
        if conversation_id is not None and not isinstance(conversation_id, int):
            raise ApiError(400, "invalid_conversation", "conversation is an id.", "conversation")
        try:
            conversation, _source = answers.conversation_and_source(
                user, notebook, conversation_id, None
            )
        except Http404:
            raise ApiError(404, "not_found", "No such conversation.", "conversation") from None
        billed(request, "ask")  # type: ignore[arg-type]
        model = f"notebook-{notebook.pk}"
        # The client holds the conversation (OpenAI's API is stateless): its earlier
        # messages are the turns a follow-up is read with; with none, a continued
        # conversation's stored turns are.
        turns = asked.turns or None
        if asked.stream:
            items = answers.ask_streamed(
                user=user,
                notebook=notebook,
                question=asked.question,
                conversation=conversation,
                turns=turns,
            )
            response = StreamingHttpResponse(
                _chunks(items, model), content_type="text/event-stream"
            )
            response["Cache-Control"] = "no-cache"
            response["X-Accel-Buffering"] = "no"
            return response
        answer = answers.ask(
            user=user,
            notebook=notebook,
            question=asked.question,
            conversation=conversation,
            turns=turns,
        )
    except ApiError as exc:
        return _error(exc.status, exc.code, exc.message, exc.field)
    except CreditSpent:
        return _error(402, "credit_spent", credit_spent_message())
    except ProviderError as exc:
        return _error(502, "model_failed", translated(message_of(exc)))
    except UserFacingError as exc:
        return _error(400, "refused", translated(message_of(exc)))
    return JsonResponse(_completion(answer, model))


def _usage(message: Message) -> dict[str, int]:
    used = Usage.objects.filter(message=message).aggregate(
        prompt=Sum("input_tokens", default=0), completion=Sum("output_tokens", default=0)
    )
    prompt, completion = int(used["prompt"]), int(used["completion"])
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def _loupe(answer: Answer) -> dict[str, Any]:
    return {"conversation": answer.conversation.pk, "message": answer.message.pk}


def _completion(answer: Answer, model: str) -> dict[str, Any]:
    message = answer.message
    return {
        "id": f"chatcmpl-loupe-{message.pk}",
        "object": "chat.completion",
        "created": int(message.created_at.timestamp()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": message.content},
                "finish_reason": "stop",
            }
        ],
        "usage": _usage(message),
        "citations": [citation_out(cited) for cited in message.citations.all()],
        "loupe": _loupe(answer),
    }


def _chunk(
    ident: str, model: str, delta: dict[str, Any], finish: str | None = None, **extra: Any
) -> str:
    body = {
        "id": ident,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **extra,
    }
    return f"data: {json.dumps(body, default=str)}\n\n"


def _final(answer: Answer) -> dict[str, Any]:
    message = answer.message
    return {
        "citations": [citation_out(cited) for cited in message.citations.all()],
        "usage": _usage(message),
        # The stored text: its markers renumbered by first appearance, as the citations are.
        "loupe": {**_loupe(answer), "content": message.content},
    }


async def _chunks(items: Generator[answers.Item, None, None], model: str) -> AsyncIterator[str]:
    ident = f"chatcmpl-loupe-{int(time.time() * 1000)}"
    yield _chunk(ident, model, {"role": "assistant", "content": ""})
    try:
        async for item in answers.relay(items):
            if isinstance(item, Evidence):
                continue
            if isinstance(item, Answer):
                final = await sync_to_async(_final)(item)
                yield _chunk(ident, model, {}, "stop", **final)
            else:
                yield _chunk(ident, model, {"content": item})
    except (CreditSpent, ProviderError, UserFacingError) as exc:
        message = (
            credit_spent_message() if isinstance(exc, CreditSpent) else translated(message_of(exc))
        )
        yield f"data: {json.dumps({'error': {'message': message, 'type': 'api_error'}})}\n\n"
    yield "data: [DONE]\n\n"
