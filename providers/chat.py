"""Chat completions from the OpenAI-compatible endpoint; every call is metered."""

from __future__ import annotations

from dataclasses import dataclass

import openai
from django.conf import settings
from django.contrib.auth.models import User

from billing.services import record_usage
from providers.errors import ProviderError
from providers.openai_client import client, describe_error, remote_configured
from providers.tokens import reported_or_estimated


@dataclass(frozen=True)
class ChatReply:
    text: str
    model: str


def chat_available() -> bool:
    """A language model is configured; without one, answers are extractive."""
    return remote_configured() and bool(settings.CHAT_MODEL)


def chat(
    messages: list[dict[str, str]], *, user: User | None, temperature: float = 0.1
) -> ChatReply:
    if not chat_available():
        raise ProviderError("No chat model is configured (set OPENAI_BASE_URL and CHAT_MODEL).")
    model = settings.CHAT_MODEL
    try:
        response = client().chat.completions.create(
            model=model,
            messages=messages,  # type: ignore[arg-type]
            temperature=temperature,
        )
        if isinstance(response, str):
            # The openai package hands back a body that is not JSON (a proxy's error page,
            # say) as plain text instead of raising.
            raise ValueError(f"a response that is not JSON: {response[:80]!r}")
    except (openai.OpenAIError, ValueError, TypeError, KeyError, AttributeError) as exc:
        raise ProviderError(describe_error("chat", exc)) from exc
    usage = response.usage
    content = response.choices[0].message.content if response.choices else None
    record_usage(
        user=user,
        kind="chat",
        model=model,
        input_tokens=reported_or_estimated(
            usage, "prompt_tokens", *(message["content"] for message in messages)
        ),
        output_tokens=reported_or_estimated(usage, "completion_tokens", content or ""),
    )
    if content is None:
        raise ProviderError(f"The chat model {model} returned an empty answer.")
    return ChatReply(text=content, model=model)
