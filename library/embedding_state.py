"""Which embedding model made the searched vectors, and which one `manage.py reembed` is
switching to, as the database says (EmbeddingState). The providers embed with the model
they are given; this is where callers read which one that is."""

from __future__ import annotations

from library.models import EmbeddingState
from providers.embeddings import EmbeddingModel, configured_model


def active() -> EmbeddingModel:
    """The model that made the searched vectors: it may differ from the configured one until
    `manage.py reembed` has switched. One primary-key read, so every process sees a switch
    at once."""
    row = EmbeddingState.objects.filter(pk=1).values_list("active_model", "active_dimensions")
    state = row.first()
    if state is None:
        return configured_model()
    return EmbeddingModel(*state)


def target() -> EmbeddingModel | None:
    """The model `manage.py reembed` is switching to, if a switch is under way."""
    row = EmbeddingState.objects.filter(pk=1).values_list("target_model", "target_dimensions")
    state = row.first()
    return EmbeddingModel(*state) if state and state[0] else None


def active_model() -> str:
    return active().name
