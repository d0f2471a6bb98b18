"""The one OpenAI-compatible client every remote role uses (OpenAI, Ollama, vLLM, …)."""

from __future__ import annotations

from functools import lru_cache

import openai
from django.conf import settings

from texts import Text

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
def _client(base_url: str, api_key: str, timeout: float, max_retries: int) -> openai.OpenAI:
    # The openai package retries 408/409/429/5xx and connection errors with exponential
    # backoff; the timeout bounds each attempt.
    return openai.OpenAI(
        base_url=base_url, api_key=api_key or "none", timeout=timeout, max_retries=max_retries
    )


def client(base_url: str = "") -> openai.OpenAI:
    return _client(
        base_url or settings.OPENAI_BASE_URL,
        settings.OPENAI_API_KEY,
        settings.OPENAI_TIMEOUT_SECONDS,
        settings.OPENAI_MAX_RETRIES,
    )


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
