"""Which embedding model made the searched vectors, and which one `manage.py reembed` is
switching to, as the database says (EmbeddingState). The providers embed with the model
they are given; this is where callers read which one that is."""

from __future__ import annotations

from django.db import connection

from library.models import EmbeddingState
from providers.embeddings import EmbeddingModel, configured_model


def active() -> EmbeddingModel:
    """The model that made the searched vectors: it may differ from the configured one until
    `manage.py reembed` has switched. One primary-key read, so every process sees a switch
    at once."""
    # Written out: every question reads it before its search, and building the queryset
    # took twice as long as the read (bench/README.md, streaming overhead).
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT active_model, active_dimensions FROM {EmbeddingState._meta.db_table} "
            "WHERE id = 1"
        )
        state = cursor.fetchone()
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
