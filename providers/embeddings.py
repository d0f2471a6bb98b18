"""Embeddings: an OpenAI-compatible endpoint when configured, else local e5; all metered."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import openai
from django.conf import settings
from django.contrib.auth.models import User

from billing.services import record_usage
from providers import local_e5, local_fuse
from providers.errors import ProviderError
from providers.openai_client import client, describe_error, remote_configured, retried
from providers.tokens import reported_or_estimated
from texts import Text

# The models that run in-process, offline, by EMBEDDING_MODEL name; without
# OPENAI_BASE_URL, and unless EMBEDDING_MODEL names another of them, LOCAL_DEFAULT serves.
LOCAL_MODELS = {local_e5.MODEL_NAME: local_e5, local_fuse.MODEL_NAME: local_fuse}
LOCAL_DEFAULT = local_e5.MODEL_NAME


@dataclass(frozen=True)
class EmbeddingModel:
    name: str
    # The `dimensions` asked of an OpenAI-compatible model; None: the model's own.
    dimensions: int | None = None

    @property
    def is_local(self) -> bool:
        return self.name in LOCAL_MODELS


def configured_model() -> EmbeddingModel:
    """The model the settings name: the one new vectors should come from. A local model
    named by EMBEDDING_MODEL runs in-process even when OPENAI_BASE_URL serves the rest."""
    if settings.EMBEDDING_MODEL in LOCAL_MODELS:
        return EmbeddingModel(settings.EMBEDDING_MODEL)
    if remote_configured():
        return EmbeddingModel(settings.EMBEDDING_MODEL, settings.EMBEDDING_DIMENSIONS or None)
    return EmbeddingModel(LOCAL_DEFAULT)


def embed_texts(
    texts: list[str],
    *,
    user: User | None,
    model: EmbeddingModel,
    on_progress: Callable[[int, int], None] | None = None,
) -> list[list[float]]:
    """Embed documents in batches with `model` (library/embedding_state.py says which
    model made the searched vectors); `on_progress(done, total)` after each batch.

    A remote model gets up to EMBEDDING_CONCURRENT_REQUESTS batches at once: each request
    is mostly waiting (the network, the server's own work), which several can share."""
    vectors: list[list[float]] = []
    batch_size = 8 if model.is_local else settings.EMBEDDING_BATCH_SIZE
    batches = [texts[start : start + batch_size] for start in range(0, len(texts), batch_size)]
    concurrent = 1 if model.is_local else min(settings.EMBEDDING_CONCURRENT_REQUESTS, len(batches))
    if concurrent <= 1:
        for batch in batches:
            vectors.extend(_embed_batch(batch, user=user, is_query=False, model=model))
            if on_progress:
                on_progress(len(vectors), len(texts))
        return vectors
    _require_remote(model)
    with ThreadPoolExecutor(max_workers=concurrent) as pool:
        futures = [pool.submit(_remote_vectors, batch, model=model) for batch in batches]
        billed = 0
        try:
            for batch, future in zip(batches, futures, strict=True):
                # In order, in this thread: the usage rows go where record_usage's context
                # (deferred_usage, the billing purpose) says.
                batch_vectors, tokens = future.result()
                record_usage(user=user, kind="embedding", model=model.name, input_tokens=tokens)
                billed += 1
                vectors.extend(_checked(batch_vectors, batch, model=model))
                if on_progress:
                    on_progress(len(vectors), len(texts))
        except BaseException:
            pool.shutdown(wait=True, cancel_futures=True)
            # The requests answered after the failed one were paid for all the same.
            for future in futures[billed:]:
                if not future.cancelled() and future.exception() is None:
                    record_usage(
                        user=user,
                        kind="embedding",
                        model=model.name,
                        input_tokens=future.result()[1],
                    )
            raise
    return vectors


def embed_query(text: str, *, user: User | None, model: EmbeddingModel) -> list[float]:
    """The question's vector by `model`: a search must compare it only with chunks of the
    same model, so callers that search pass the model they read."""
    return _embed_batch([text], user=user, is_query=True, model=model)[0]


def _embed_batch(
    texts: list[str], *, user: User | None, is_query: bool, model: EmbeddingModel
) -> list[list[float]]:
    if model.is_local:
        local = LOCAL_MODELS[model.name]
        if is_query:
            vector, tokens = local.embed_query(texts[0])
            vectors = [vector]
        else:
            vectors, tokens = local.embed_passages(texts)
        record_usage(user=user, kind="embedding", model=model.name, input_tokens=tokens)
        return vectors
    _require_remote(model)
    vectors, tokens = _remote_vectors(texts, model=model)
    record_usage(user=user, kind="embedding", model=model.name, input_tokens=tokens)
    return _checked(vectors, texts, model=model)


def remote_vectors(texts: list[str], *, model: EmbeddingModel) -> tuple[list[list[float]], int]:
    """A remote model's vectors for `texts` (one request, checked as embed_texts checks
    them) and the tokens to bill, unbilled: no database, so it may run in another thread,
    and the caller bills the tokens (bill_embedding) in its own."""
    _require_remote(model)
    vectors, tokens = _remote_vectors(texts, model=model)
    return _checked(vectors, texts, model=model), tokens


def bill_embedding(*, user: User | None, model: EmbeddingModel, tokens: int) -> None:
    """The usage row of one embedding request made by remote_vectors."""
    record_usage(user=user, kind="embedding", model=model.name, input_tokens=tokens)


def _require_remote(model: EmbeddingModel) -> None:
    if not remote_configured():
        raise ProviderError(
            Text(
                "The embedding model %(model)s needs OPENAI_BASE_URL; it made the vectors "
                "searched now. Configure it again, or switch models with manage.py reembed.",
                model=model.name,
            )
        )


def _remote_vectors(texts: list[str], *, model: EmbeddingModel) -> tuple[list[list[float]], int]:
    """The vectors the remote model returned for `texts`, in their order, and the tokens
    it counted (or an estimate). No database: it may run in another thread."""
    kwargs: dict = {"model": model.name, "input": texts}
    if model.dimensions:
        kwargs["dimensions"] = model.dimensions
    try:
        response = retried(lambda: client().embeddings.create(**kwargs))
    except (openai.OpenAIError, ValueError, TypeError, KeyError, AttributeError) as exc:
        raise ProviderError(describe_error("embedding", exc)) from exc
    tokens = reported_or_estimated(response.usage, "prompt_tokens", *texts)
    data = sorted(response.data, key=lambda item: item.index)
    return [list(item.embedding) for item in data], tokens


def _checked(
    vectors: list[list[float]], texts: list[str], *, model: EmbeddingModel
) -> list[list[float]]:
    """The vectors, once there is one per text, each of EMBEDDING_DIMENSIONS."""
    if len(vectors) != len(texts):
        raise ProviderError(
            Text(
                "The embedding model %(model)s returned %(vectors)s vectors for %(texts)s texts.",
                model=model.name,
                vectors=len(vectors),
                texts=len(texts),
            )
        )
    expected = model.dimensions
    for vector in vectors:
        if expected and len(vector) != expected:
            raise ProviderError(
                Text(
                    "The embedding model %(model)s returned %(dimensions)s dimensions, but "
                    "EMBEDDING_DIMENSIONS is %(expected)s. Fix the setting or the model.",
                    model=model.name,
                    dimensions=len(vector),
                    expected=expected,
                )
            )
    return vectors
