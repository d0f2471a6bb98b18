"""Embeddings: an OpenAI-compatible endpoint when configured, else local e5; all metered."""

from __future__ import annotations

from collections.abc import Callable

import openai
from django.conf import settings
from django.contrib.auth.models import User

from billing.services import record_usage
from providers import local_e5
from providers.errors import ProviderError
from providers.openai_client import client, describe_error, remote_configured
from providers.tokens import reported_or_estimated

# e5 puts related and unrelated text between ~0.7 and ~0.9; API models spread wider.
DEFAULT_FLOORS = {local_e5.MODEL_NAME: 0.80}
DEFAULT_FLOOR = 0.3


def active_model() -> str:
    if remote_configured():
        return settings.EMBEDDING_MODEL
    return local_e5.MODEL_NAME


def similarity_floor() -> float:
    if settings.SIMILARITY_FLOOR >= 0:
        return float(settings.SIMILARITY_FLOOR)
    return DEFAULT_FLOORS.get(active_model(), DEFAULT_FLOOR)


def embed_texts(
    texts: list[str],
    *,
    user: User | None,
    on_progress: Callable[[int, int], None] | None = None,
) -> list[list[float]]:
    """Embed documents in batches; `on_progress(done, total)` after each batch."""
    vectors: list[list[float]] = []
    batch_size = settings.EMBEDDING_BATCH_SIZE if remote_configured() else 8
    for start in range(0, len(texts), batch_size):
        batch = texts[start : start + batch_size]
        vectors.extend(_embed_batch(batch, user=user, is_query=False))
        if on_progress:
            on_progress(len(vectors), len(texts))
    return vectors


def embed_query(text: str, *, user: User | None) -> list[float]:
    return _embed_batch([text], user=user, is_query=True)[0]


def _embed_batch(texts: list[str], *, user: User | None, is_query: bool) -> list[list[float]]:
    model = active_model()
    if not remote_configured():
        if is_query:
            vector, tokens = local_e5.embed_query(texts[0])
            vectors = [vector]
        else:
            vectors, tokens = local_e5.embed_passages(texts)
        record_usage(user=user, kind="embedding", model=model, input_tokens=tokens)
        return vectors

    kwargs: dict = {"model": model, "input": texts}
    if settings.EMBEDDING_DIMENSIONS:
        kwargs["dimensions"] = settings.EMBEDDING_DIMENSIONS
    try:
        response = client().embeddings.create(**kwargs)
    except (openai.OpenAIError, ValueError, TypeError, KeyError, AttributeError) as exc:
        raise ProviderError(describe_error("embedding", exc)) from exc
    record_usage(
        user=user,
        kind="embedding",
        model=model,
        input_tokens=reported_or_estimated(response.usage, "prompt_tokens", *texts),
    )
    data = sorted(response.data, key=lambda item: item.index)
    vectors = [list(item.embedding) for item in data]
    if len(vectors) != len(texts):
        raise ProviderError(
            f"The embedding model {model} returned {len(vectors)} vectors for {len(texts)} texts."
        )
    expected = settings.EMBEDDING_DIMENSIONS
    for vector in vectors:
        if expected and len(vector) != expected:
            raise ProviderError(
                f"The embedding model {model} returned {len(vector)} dimensions, but "
                f"EMBEDDING_DIMENSIONS is {expected}. Fix the setting or the model."
            )
    return vectors
