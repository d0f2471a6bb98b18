"""Chat completions from the OpenAI-compatible endpoint; every call is metered.

Waits are bounded the way a slow local server needs (config/settings/providers.py): a
streamed reply by the time to its first word (CHAT_FIRST_TOKEN_SECONDS) and then by the gap
between words (CHAT_IDLE_SECONDS), not by a total; a reply that is not streamed by
CHAT_TIMEOUT_SECONDS.
A request is sent again by the rule every model call follows (providers/openai_client.py):
only when the server never got it or refused it.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from typing import Any

import httpx2
import openai
from django.conf import settings
from django.contrib.auth.models import User

from billing.models import Usage
from billing.services import record_usage
from providers.errors import ProviderError
from providers.openai_client import chat_base_url, client, describe_error, retried
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
    return bool(chat_base_url()) and bool(settings.CHAT_MODEL)


def chat(
    messages: list[dict[str, str]],
    *,
    user: User | None,
    temperature: float = 0.1,
    response_format: dict[str, Any] | None = None,
    max_tokens: int | None = None,
    timeout: float | None = None,
) -> ChatReply:
    """One completion; `response_format` (e.g. a json_schema) and `max_tokens` are passed
    on when given; `timeout` shortens the wait (CHAT_TIMEOUT_SECONDS) for a caller with a
    budget of its own."""
    if not chat_available():
        raise ProviderError(
            Text("No chat model is configured (set OPENAI_BASE_URL and CHAT_MODEL).")
        )
    model = settings.CHAT_MODEL
    extra: dict[str, Any] = {"response_format": response_format} if response_format else {}
    if max_tokens is not None:
        extra["max_tokens"] = max_tokens
    wait = settings.CHAT_TIMEOUT_SECONDS if timeout is None else timeout
    try:
        response = _create(
            wait,
            model=model,
            messages=messages,
            temperature=temperature,
            **extra,
        )
        if isinstance(response, str):
            # The openai package hands back a body that is not JSON (a proxy's error page,
            # say) as plain text instead of raising.
            raise ValueError(f"a response that is not JSON: {response[:80]!r}")
    except openai.APITimeoutError as exc:
        raise ProviderError(_slow(wait, "CHAT_TIMEOUT_SECONDS")) from exc
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


def _create(timeout: float, **request: Any) -> Any:
    """chat.completions.create with `timeout` for the reply (the connection itself gets
    OPENAI_TIMEOUT_SECONDS), sent again when the server did not take it on."""
    budget = httpx2.Timeout(timeout, connect=min(timeout, settings.OPENAI_TIMEOUT_SECONDS))
    chat_client = client(chat_base_url()).with_options(timeout=budget)
    return retried(lambda: chat_client.chat.completions.create(**request))


def _slow(seconds: float, setting: str, *, started: bool = False) -> Text:
    """What the person reads when a wait ran out: the server is slow, for how long it was
    given, and the setting that gives it longer."""
    named = {"where": chat_base_url(), "seconds": f"{seconds:g}", "setting": setting}
    if started:
        return Text(
            "The chat model at %(where)s stopped writing for %(seconds)s s: the model server "
            "is slow or stuck. Try again; a slow server can be given longer (%(setting)s).",
            **named,
        )
    return Text(
        "The chat model at %(where)s did not answer in time (%(seconds)s s): the model server "
        "is slow (a long prompt takes a CPU server minutes) or stuck. Try again; a slow server "
        "can be given longer (%(setting)s).",
        **named,
    )


WATCH_SECONDS = 0.1


class _Watchdog:
    """Hangs up on a stream whose next word is overdue (the deadline moves with each word).

    The socket read cannot be given a new timeout once the body is being read, so a thread
    waits for the deadline and shuts the socket down, which ends the blocked read at once.
    """

    def __init__(self, response: httpx2.Response, deadline: float) -> None:
        # Without a socket to shut (another transport), the read timeout, the first-word
        # bound, still ends every read.
        stream = response.extensions.get("network_stream")
        self._socket: socket.socket | None = (
            stream.get_extra_info("socket") if stream is not None else None
        )
        self.deadline = deadline
        self.fired = False
        self._stop = threading.Event()
        threading.Thread(target=self._watch, name="chat-stream-watchdog", daemon=True).start()

    def _watch(self) -> None:
        # Woken at least every WATCH_SECONDS: the deadline moves, and moves closer when the
        # first word comes (CHAT_IDLE_SECONDS is shorter than CHAT_FIRST_TOKEN_SECONDS).
        while not self._stop.wait(min(WATCH_SECONDS, max(0.0, self.deadline - time.monotonic()))):
            if time.monotonic() >= self.deadline:
                self.fired = True
                if self._socket is not None:
                    # OSError: already closed, the stream ended as the deadline came.
                    with contextlib.suppress(OSError):
                        self._socket.shutdown(socket.SHUT_RDWR)
                return

    def stop(self) -> None:
        self._stop.set()


# What a stream can raise while it is read: the client's errors, the connection's (a read
# timeout, a server that hangs up), and a body that is not the chunks it expects (the openai
# package parses each event as it arrives).
STREAM_ERRORS = (
    openai.OpenAIError,
    httpx2.HTTPError,
    ValueError,
    TypeError,
    KeyError,
    AttributeError,
)


class ChatStream:
    """A chat completion read as it is written: iterate for the text deltas.

    Exactly one usage row is written, when the stream ends or when the reader stops early
    (`close()`, which a `for` loop broken off or a dropped generator also calls): the
    provider's counts from the final usage chunk, else estimates over the prompt and the
    text received so far. `usage` is that row, once written.
    """

    def __init__(
        self,
        messages: list[dict[str, str]],
        *,
        user: User | None,
        temperature: float = 0.1,
        max_tokens: int | None = None,
        response_format: dict[str, Any] | None = None,
        first_token_seconds: float | None = None,
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
        # "stop", or "length" when max_tokens cut the reply off; None until the server says.
        self.finish_reason: str | None = None
        first_token = first_token_seconds or settings.CHAT_FIRST_TOKEN_SECONDS
        extra: dict[str, Any] = {"response_format": response_format} if response_format else {}
        if max_tokens is not None:
            extra["max_tokens"] = max_tokens
        started = time.monotonic()
        try:
            # The response's headers may wait for the first word (or come at once, the
            # words later): either way within CHAT_FIRST_TOKEN_SECONDS of the request.
            self._response = _create(
                first_token,
                model=self.model,
                messages=messages,
                temperature=temperature,
                stream=True,
                stream_options={"include_usage": True},
                **extra,
            )
        except openai.APITimeoutError as exc:
            raise ProviderError(_slow(first_token, "CHAT_FIRST_TOKEN_SECONDS")) from exc
        except STREAM_ERRORS as exc:
            raise ProviderError(describe_error("chat", exc)) from exc
        kind = self._response.response.headers.get("content-type", "")
        if not kind.startswith("text/event-stream"):
            # A proxy's error page or a body of garbage: the stream's parser would read no
            # event in it and call it an empty answer.
            self._response.close()
            raise ProviderError(
                describe_error("chat", ValueError(f"a reply that is not a stream ({kind})"))
            )
        self._watchdog = _Watchdog(self._response.response, started + first_token)
        self._deltas = self._read()

    @property
    def text(self) -> str:
        """The text received so far."""
        return "".join(self._parts)

    def __iter__(self) -> Iterator[str]:
        return self._deltas

    def close(self) -> None:
        self._deltas.close()
        self._watchdog.stop()
        if self.usage is None:  # closed before the first delta was asked for
            self._response.close()
            self._record()

    def _read(self) -> Generator[str, None, None]:
        try:
            for chunk in self._response:
                if chunk.usage is not None:
                    self._reported = chunk.usage
                for choice in chunk.choices:
                    if choice.finish_reason:
                        self.finish_reason = choice.finish_reason
                    if choice.delta.content:
                        self._parts.append(choice.delta.content)
                        self._watchdog.deadline = time.monotonic() + settings.CHAT_IDLE_SECONDS
                        yield choice.delta.content
        except STREAM_ERRORS as exc:
            if self._watchdog.fired:
                raise ProviderError(self._overdue()) from exc
            raise ProviderError(describe_error("chat", exc)) from exc
        finally:
            self._watchdog.stop()
            self._response.close()  # a reader that stops early hangs up on the provider
            self._record()
        if self._watchdog.fired:  # the hang-up read as the end of the body
            raise ProviderError(self._overdue())
        if not self._parts:
            raise ProviderError(
                Text("The chat model %(model)s returned an empty answer.", model=self.model)
            )

    def _overdue(self) -> Text:
        if self._parts:
            return _slow(settings.CHAT_IDLE_SECONDS, "CHAT_IDLE_SECONDS", started=True)
        return _slow(settings.CHAT_FIRST_TOKEN_SECONDS, "CHAT_FIRST_TOKEN_SECONDS")

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
    messages: list[dict[str, str]],
    *,
    user: User | None,
    temperature: float = 0.1,
    max_tokens: int | None = None,
    response_format: dict[str, Any] | None = None,
    first_token_seconds: float | None = None,
) -> ChatStream:
    """Start a streamed chat completion (ProviderError if it cannot start); see ChatStream.
    `first_token_seconds` replaces CHAT_FIRST_TOKEN_SECONDS for a caller with a budget of its
    own (a studio document reads a long prompt first)."""
    return ChatStream(
        messages,
        user=user,
        temperature=temperature,
        max_tokens=max_tokens,
        response_format=response_format,
        first_token_seconds=first_token_seconds,
    )
