"""JSON from the chat model against a schema: asked for with response_format where the
endpoint supports it (GENERATION_RESPONSE_FORMAT), always parsed and checked here, and
repaired once (one more call that is shown the error). A second invalid reply fails the
document; both calls are billed, as the provider billed them."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import jsonschema
from django.conf import settings
from django.contrib.auth.models import User

from generation.documents.inputs import GenerationFailed, prompt_budget
from language.tokens import estimate_tokens
from providers.chat import ChatReply
from texts import Text

if TYPE_CHECKING:
    from generation.documents.deadline import Deadline

T = TypeVar("T")
LISTED_DETAILS = 15  # a longer list would drown the model's second try
REPAIR_TEMPERATURE = 0.6

FENCE_RE = re.compile(r"^\s*```(?:json)?\s*\n?(.*?)\n?```\s*$", re.DOTALL)


class InvalidOutput(ValueError):
    """The reply is not JSON of the expected shape; the message says what is wrong, and
    `details` item by item, for the model's second try."""

    def __init__(self, message: str, *, details: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.details = list(details)


@dataclass(frozen=True)
class StructuredReply(Generic[T]):
    data: T
    model: str
    repaired: bool


def parse(
    text: str, schema: dict[str, Any], check: Callable[[dict[str, Any]], None] | None = None
) -> dict[str, Any]:
    """The reply's JSON object, valid against `schema` and `check`; InvalidOutput if not."""
    fenced = FENCE_RE.match(text)
    if fenced:  # models without response_format like to wrap JSON in a code fence
        text = fenced.group(1)
    try:
        data = json.loads(text)
    except ValueError as exc:
        # Small models like to say something before or after the object, too.
        start, end = text.find("{"), text.rfind("}")
        try:
            data = json.loads(text[start : end + 1]) if 0 <= start < end else None
        except ValueError:
            data = None
        if data is None:
            raise InvalidOutput(f"not JSON ({exc})") from exc
    validator = jsonschema.Draft202012Validator(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(data))
    if error is not None:
        where = "/".join(str(part) for part in error.absolute_path) or "the top level"
        raise InvalidOutput(f"at {where}: {error.message}")
    if check is not None:
        check(data)
    return data


def generate_json(
    *,
    system: str,
    material: str,
    schema: dict[str, Any],
    name: str,
    what: Text,
    user: User,
    accept: Callable[[dict[str, Any]], T],
    passages: int,
    max_tokens: int,
    deadline: Deadline,
    on_written: Callable[[str], None] | None = None,
) -> StructuredReply[T]:
    """The model's JSON for `schema`, as `accept` takes it (it may fix what it can and
    raises InvalidOutput for what it cannot); one repair call, told what was wrong and
    which of the `passages` numbers exist (0: the kind cites none). `name` names the schema
    for the server, `what` the reply for the reader of a failure. With `on_written`, each
    reply is streamed and the text so far handed to it as it grows."""
    messages = _first_messages(system=system, material=material, schema=schema)
    budget = _budget_for(messages, max_tokens=max_tokens)
    response_format = None
    if settings.GENERATION_RESPONSE_FORMAT == "json_schema":
        response_format = {
            "type": "json_schema",
            "json_schema": {"name": name, "schema": schema},
        }

    def ask(temperature: float) -> ChatReply:
        options: dict[str, Any] = {
            "user": user,
            "temperature": temperature,
            "response_format": response_format,
            "max_tokens": max_tokens,
        }
        if on_written is not None:
            return deadline.written(messages, on_written=on_written, **options)
        return deadline.chat(messages, **options)

    def taken(reply: ChatReply) -> T:
        try:
            return accept(parse(reply.text, schema))
        except InvalidOutput as exc:
            if reply.finish_reason == "length":
                raise InvalidOutput(
                    f"it was cut off at {max_tokens} tokens, the most a {name} may take "
                    f"({exc}); write a shorter one",
                    details=exc.details,
                ) from exc
            raise

    reply = ask(0.2)
    try:
        return StructuredReply(taken(reply), reply.model, repaired=False)
    except InvalidOutput as exc:
        first_error = exc
    messages = _repair_messages(
        messages,
        material=material,
        reply=reply.text,
        repair=repair_message(first_error, passages=passages),
        budget=budget,
    )
    # Warmer than the first: asked again at temperature 0, a small model wrote its invalid
    # reply again word for word, whatever the repair message said.
    reply = ask(REPAIR_TEMPERATURE)
    try:
        return StructuredReply(taken(reply), reply.model, repaired=True)
    except InvalidOutput as exc:
        raise GenerationFailed(
            Text(
                "The chat model %(model)s did not return a valid %(kind)s twice (first "
                "%(first)s; then %(then)s).",
                model=reply.model,
                kind=what,
                first=str(first_error),
                then=str(exc),
            )
        ) from exc


def _first_messages(*, system: str, material: str, schema: dict[str, Any]) -> list[dict[str, str]]:
    return [
        {
            "role": "system",
            "content": system
            + "\n\nReply with one JSON object only, valid against this JSON schema:\n"
            + json.dumps(schema),
        },
        {"role": "user", "content": material},
    ]


def _budget_for(messages: list[dict[str, str]], *, max_tokens: int) -> int:
    """The tokens the prompt may hold beside a reply of `max_tokens`; GenerationFailed when
    the first messages need more."""
    budget = prompt_budget(max_tokens)
    needed = estimate_tokens(*(message["content"] for message in messages))
    if needed > budget:
        # fit_material keeps the material within the budget; the schema and instructions
        # come on top, and a prompt is never sent over it.
        raise GenerationFailed(
            Text(
                "The generator's prompt needs about %(needed)s tokens, more than it may hold "
                "(%(budget)s: GENERATION_INPUT_TOKENS, and CHAT_CONTEXT_TOKENS less room for "
                "the reply).",
                needed=needed,
                budget=budget,
            )
        )
    return budget


def _repair_messages(
    messages: list[dict[str, str]], *, material: str, reply: str, repair: str, budget: int
) -> list[dict[str, str]]:
    """The second try's messages: the first ones, the invalid reply and what was wrong."""
    with_reply = [
        {"role": "assistant", "content": reply},
        {"role": "user", "content": repair},
    ]
    contents = [message["content"] for message in messages + with_reply]
    if estimate_tokens(*contents) <= budget:
        return messages + with_reply
    # The reply and a second one do not both fit the model's context: the second try is
    # told what was wrong, item by item, without the reply itself.
    return [messages[0], {"role": "user", "content": f"{material}\n\n{repair}"}]


def repair_message(error: InvalidOutput, *, passages: int) -> str:
    """The second try's prompt: what was wrong, item by item, and the passages that exist."""
    lines = [f"That reply is not valid: {error}."]
    if error.details:
        lines.append("What was wrong, item by item:")
        lines += [f"- {detail}" for detail in error.details[:LISTED_DETAILS]]
        if len(error.details) > LISTED_DETAILS:
            lines.append(f"- and {len(error.details) - LISTED_DETAILS} more")
    if passages:
        lines.append(
            f"The passages are numbered [1] to [{passages}]; no other number exists. "
            "Write only what a passage states, each claim with the marker of its passage."
        )
    lines.append("Reply again with the corrected JSON object only, not the same one.")
    return "\n".join(lines)
