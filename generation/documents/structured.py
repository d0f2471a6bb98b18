"""JSON from the chat model against a schema: asked for with response_format where the
endpoint supports it (GENERATION_RESPONSE_FORMAT), always parsed and checked here, and
repaired once (one more call that is shown the error). A second invalid reply fails the
document; both calls are billed, as the provider billed them."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jsonschema
from django.conf import settings
from django.contrib.auth.models import User

from generation.documents.inputs import GenerationFailed
from providers.chat import chat
from providers.tokens import estimate_tokens
from texts import Text

FENCE_RE = re.compile(r"^\s*```(?:json)?\s*\n?(.*?)\n?```\s*$", re.DOTALL)


class InvalidOutput(ValueError):
    """The reply is not JSON of the expected shape; the message says what is wrong."""


@dataclass(frozen=True)
class StructuredReply:
    data: dict[str, Any]
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
    user: User,
    check: Callable[[dict[str, Any]], None] | None = None,
) -> StructuredReply:
    messages = [
        {
            "role": "system",
            "content": system
            + "\n\nReply with one JSON object only, valid against this JSON schema:\n"
            + json.dumps(schema),
        },
        {"role": "user", "content": material},
    ]
    budget = settings.GENERATION_INPUT_TOKENS
    needed = estimate_tokens(*(message["content"] for message in messages))
    if needed > budget:
        # fit_material keeps the material within the budget; the schema and instructions
        # come on top, and a prompt is never sent over it.
        raise GenerationFailed(
            Text(
                "The generator's prompt needs about %(needed)s tokens, more than "
                "GENERATION_INPUT_TOKENS (%(budget)s).",
                needed=needed,
                budget=budget,
            )
        )
    response_format = None
    if settings.GENERATION_RESPONSE_FORMAT == "json_schema":
        response_format = {
            "type": "json_schema",
            "json_schema": {"name": name, "schema": schema},
        }
    reply = chat(messages, user=user, temperature=0.2, response_format=response_format)
    try:
        return StructuredReply(parse(reply.text, schema, check), reply.model, repaired=False)
    except InvalidOutput as exc:
        first_error = exc
    messages += [
        {"role": "assistant", "content": reply.text},
        {
            "role": "user",
            "content": f"That reply is not valid: {first_error}. Reply again with the "
            "corrected JSON object only.",
        },
    ]
    reply = chat(messages, user=user, temperature=0.0, response_format=response_format)
    try:
        return StructuredReply(parse(reply.text, schema, check), reply.model, repaired=True)
    except InvalidOutput as exc:
        raise GenerationFailed(
            Text(
                "The chat model %(model)s did not return a valid %(kind)s twice (first "
                "%(first)s; then %(then)s).",
                model=reply.model,
                kind=name,
                first=str(first_error),
                then=str(exc),
            )
        ) from exc
