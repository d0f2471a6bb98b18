"""The one OpenAI-compatible client every remote role uses (OpenAI, Ollama, vLLM, …), and
the one rule by which a model call is sent again.

A call is sent again, up to OPENAI_MAX_RETRIES times, only when the server never got it (no
connection) or refused it (408, 409, 429, 5xx), after the server's Retry-After or a wait
that doubles from half a second: sending it again then costs the server nothing and is
billed once. A request the server took and was still answering when the wait ran out (a
read timeout, a connection dropped mid-answer) is not sent again here: on a CPU server that
would mean reading the whole prompt again, minutes, for nothing. Such a failure is
transient all the same (providers/errors.py): a job tries it again later (ops/jobs.py).
The openai package's own retries are off (max_retries=0), since they would re-send it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from functools import lru_cache
from typing import TypeVar

import httpx2
import openai
from django.conf import settings

from texts import Text

logger = logging.getLogger(__name__)
T = TypeVar("T")

# The longest wait before sending again: a server's Retry-After, or the doubling waits.
MAX_RETRY_AFTER_SECONDS = 60.0
MAX_BACKOFF_SECONDS = 8.0

# How a message names each role's model, translated where the message is shown.
ROLE_MODELS = {
    "chat": Text("The chat model"),
    "embedding": Text("The embedding model"),
    "vision": Text("The vision model"),
    "speech-to-text": Text("The speech-to-text model"),
    "text-to-speech": Text("The text-to-speech model"),
}


def remote_configured() -> bool:
    return bool(settings.OPENAI_BASE_URL)


def chat_base_url() -> str:
    """The chat model's endpoint: its own (CHAT_BASE_URL, the local model's), else the one
    every role uses."""
    return settings.CHAT_BASE_URL or settings.OPENAI_BASE_URL


@lru_cache(maxsize=4)
def _client(base_url: str, api_key: str, timeout: float) -> openai.OpenAI:
    # The timeout bounds each attempt; `retried` decides whether there is another.
    return openai.OpenAI(
        base_url=base_url, api_key=api_key or "none", timeout=timeout, max_retries=0
    )


def client(base_url: str = "") -> openai.OpenAI:
    """The client for `base_url` (default OPENAI_BASE_URL); send its calls through `retried`."""
    return _client(
        base_url or settings.OPENAI_BASE_URL,
        settings.OPENAI_API_KEY,
        settings.OPENAI_TIMEOUT_SECONDS,
    )


def retried(send: Callable[[], T]) -> T:
    """`send()`, sent again while the server did not take it on (the module's rule)."""
    attempt = 0
    while True:
        try:
            return send()
        except (openai.APIConnectionError, openai.APIStatusError) as exc:
            if attempt >= settings.OPENAI_MAX_RETRIES or not _not_taken_on(exc):
                raise
            wait = _retry_wait(exc, attempt)
            logger.warning("model request failed (%s); retrying in %.1f s", exc, wait)
            time.sleep(wait)
            attempt += 1


def _not_taken_on(exc: openai.OpenAIError) -> bool:
    """The server refused the request or never got it, so sending it again costs it nothing."""
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in {408, 409, 429} or exc.status_code >= 500
    # A read timeout or a connection dropped mid-answer: the server may be at work on it.
    return isinstance(exc.__cause__, httpx2.ConnectError | httpx2.ConnectTimeout)


def _retry_wait(exc: openai.OpenAIError, attempt: int) -> float:
    """The server's Retry-After (as OpenAI and vLLM send with a 429), else 0.5, 1, 2 … s."""
    response = getattr(exc, "response", None)
    headers = response.headers if response is not None else {}
    try:
        if "retry-after-ms" in headers:
            return min(MAX_RETRY_AFTER_SECONDS, float(headers["retry-after-ms"]) / 1000)
        if "retry-after" in headers:
            return min(MAX_RETRY_AFTER_SECONDS, float(headers["retry-after"]))
    except ValueError:
        pass  # a date, or nonsense: back off as if none were given
    return min(MAX_BACKOFF_SECONDS, 0.5 * 2**attempt)


def describe_error(role: str, exc: Exception) -> Text:
    """A sentence a person can act on, for any failure of the openai client."""
    named = {
        "model": ROLE_MODELS.get(role) or Text("The %(role)s model", role=role),
        "where": chat_base_url() if role == "chat" else settings.OPENAI_BASE_URL,
    }
    if isinstance(exc, openai.APITimeoutError):
        return Text("%(model)s at %(where)s did not answer in time; try again later.", **named)
    if isinstance(exc, openai.APIConnectionError):
        return Text("%(model)s at %(where)s cannot be reached; is the server running?", **named)
    if isinstance(exc, openai.AuthenticationError):
        return Text("%(model)s at %(where)s refused the API key (OPENAI_API_KEY).", **named)
    if isinstance(exc, openai.RateLimitError):
        return Text("%(model)s at %(where)s is rate-limiting requests; try again later.", **named)
    if isinstance(exc, openai.APIStatusError):
        return Text(
            "%(model)s at %(where)s answered with an error (HTTP %(status)s).",
            status=exc.status_code,
            **named,
        )
    return Text(
        "%(model)s at %(where)s gave an answer Loupe cannot use (%(error)s).",
        error=str(exc),
        **named,
    )
