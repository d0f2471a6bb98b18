"""Chat completions from the OpenAI-compatible endpoint; every call is metered."""

from __future__ import annotations

from collections.abc import Generator, Iterator
from dataclasses import dataclass
from typing import Any

import openai
from django.conf import settings
from django.contrib.auth.models import User

from billing.models import Usage
from billing.services import record_usage
from providers.errors import ProviderError
from providers.openai_client import client, describe_error, remote_configured
from providers.tokens import reported_or_estimated
from texts import Text


@dataclass(frozen=True)
class ChatReply:
    text: str
    model: str
    # "stop", or "length" when max_tokens cut the reply off; None when the server omits it.
    finish_reason: str | None = None


def chat_available() -> bool:
    """A language model is configured; without one, answers are extractive."""
    return remote_configured() and bool(settings.CHAT_MODEL)


def chat(
    messages: list[dict[str, str]],
    *,
    user: User | None,
    temperature: float = 0.1,
    response_format: dict[str, Any] | None = None,
    max_tokens: int | None = None,
) -> ChatReply:
    """One completion; `response_format` (e.g. a json_schema) and `max_tokens` are passed
    on when given."""
    if not chat_available():
        raise ProviderError(
            Text("No chat model is configured (set OPENAI_BASE_URL and CHAT_MODEL).")
        )
    model = settings.CHAT_MODEL
    extra: dict[str, Any] = {"response_format": response_format} if response_format else {}
    if max_tokens is not None:
        extra["max_tokens"] = max_tokens
    try:
        response = client().chat.completions.create(
            model=model,
            messages=messages,  # type: ignore[arg-type]
            temperature=temperature,
            **extra,
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
        raise ProviderError(Text("The chat model %(model)s returned an empty answer.", model=model))
    return ChatReply(text=content, model=model, finish_reason=response.choices[0].finish_reason)


# What a stream can raise while it is read: the client's errors, and a body that is not the
# chunks it expects (the openai package parses each event as it arrives).
STREAM_ERRORS = (openai.OpenAIError, ValueError, TypeError, KeyError, AttributeError)


class ChatStream:
    """A chat completion read as it is written: iterate for the text deltas.

    Exactly one usage row is written, when the stream ends or when the reader stops early
    (`close()`, which a `for` loop broken off or a dropped generator also calls): the
    provider's counts from the final usage chunk, else estimates over the prompt and the
    text received so far. `usage` is that row, once written.
    """

    def __init__(
        self, messages: list[dict[str, str]], *, user: User | None, temperature: float = 0.1
    ) -> None:
        if not chat_available():
            raise ProviderError(
                Text("No chat model is configured (set OPENAI_BASE_URL and CHAT_MODEL).")
            )
        self.model: str = settings.CHAT_MODEL
        self.usage: Usage | None = None
        self._messages = messages
        self._user = user
        self._parts: list[str] = []
        self._reported: Any = None
        try:
            self._response = client().chat.completions.create(  # type: ignore[call-overload]
                model=self.model,
                messages=messages,
                temperature=temperature,
                stream=True,
                stream_options={"include_usage": True},
            )
        except STREAM_ERRORS as exc:
            raise ProviderError(describe_error("chat", exc)) from exc
        self._deltas = self._read()

    @property
    def text(self) -> str:
        """The text received so far."""
        return "".join(self._parts)

    def __iter__(self) -> Iterator[str]:
        return self._deltas

    def close(self) -> None:
        self._deltas.close()
        if self.usage is None:  # closed before the first delta was asked for
            self._response.close()
            self._record()

    def _read(self) -> Generator[str, None, None]:
        try:
            for chunk in self._response:
                if chunk.usage is not None:
                    self._reported = chunk.usage
                for choice in chunk.choices:
                    if choice.delta.content:
                        self._parts.append(choice.delta.content)
                        yield choice.delta.content
        except STREAM_ERRORS as exc:
            raise ProviderError(describe_error("chat", exc)) from exc
        finally:
            self._response.close()  # a reader that stops early hangs up on the provider
            self._record()
        if not self._parts:
            raise ProviderError(
                Text("The chat model %(model)s returned an empty answer.", model=self.model)
            )

    def _record(self) -> None:
        # The provider bills what it generated, whether or not the reader saw all of it.
        self.usage = record_usage(
            user=self._user,
            kind="chat",
            model=self.model,
            input_tokens=reported_or_estimated(
                self._reported,
                "prompt_tokens",
                *(message["content"] for message in self._messages),
            ),
            output_tokens=reported_or_estimated(self._reported, "completion_tokens", self.text),
        )


def chat_stream(
    messages: list[dict[str, str]], *, user: User | None, temperature: float = 0.1
) -> ChatStream:
    """Start a streamed chat completion (ProviderError if it cannot start); see ChatStream."""
    return ChatStream(messages, user=user, temperature=temperature)
