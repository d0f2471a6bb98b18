"""The one OpenAI-compatible client every remote role uses (OpenAI, Ollama, vLLM, …)."""

from __future__ import annotations

from functools import lru_cache

import openai
from django.conf import settings


def remote_configured() -> bool:
    return bool(settings.OPENAI_BASE_URL)


@lru_cache(maxsize=4)
def _client(base_url: str, api_key: str, timeout: float, max_retries: int) -> openai.OpenAI:
    # The openai package retries 408/409/429/5xx and connection errors with exponential
    # backoff; the timeout bounds each attempt.
    return openai.OpenAI(
        base_url=base_url, api_key=api_key or "none", timeout=timeout, max_retries=max_retries
    )


def client() -> openai.OpenAI:
    return _client(
        settings.OPENAI_BASE_URL,
        settings.OPENAI_API_KEY,
        settings.OPENAI_TIMEOUT_SECONDS,
        settings.OPENAI_MAX_RETRIES,
    )


def describe_error(role: str, exc: Exception) -> str:
    """A sentence a person can act on, for any failure of the openai client."""
    where = settings.OPENAI_BASE_URL
    if isinstance(exc, openai.APITimeoutError):
        return f"The {role} model at {where} did not answer in time; try again later."
    if isinstance(exc, openai.APIConnectionError):
        return f"The {role} model at {where} cannot be reached; is the server running?"
    if isinstance(exc, openai.AuthenticationError):
        return f"The {role} model at {where} refused the API key (OPENAI_API_KEY)."
    if isinstance(exc, openai.RateLimitError):
        return f"The {role} model at {where} is rate-limiting requests; try again later."
    if isinstance(exc, openai.APIStatusError):
        return f"The {role} model at {where} answered with an error (HTTP {exc.status_code})."
    return f"The {role} model at {where} gave an answer Loupe cannot use ({exc})."
