from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import Tags, Warning, register
from django.db import DatabaseError


# A database check (Django runs those in `migrate` and `check --database default`, which
# `make run` runs before it starts), since it reads the active model from the database.
@register(Tags.database)
def embedding_model_matches_the_settings(app_configs: Any, **kwargs: Any) -> list[Warning]:
    """A changed embedding setting takes effect only through `manage.py reembed`: until then
    the model that made the stored vectors keeps serving, and this says so."""
    from library import embedding_state
    from providers import embeddings

    if not kwargs.get("databases"):
        return []  # asked for no database: a plain `check`, or a test without one
    try:
        active = embedding_state.active()
        target = embedding_state.target()
    except DatabaseError:
        return []  # no database yet, or not migrated: nothing embedded to disagree with
    configured = embeddings.configured_model()
    if active.name == configured.name:
        return []
    if target and target.name == configured.name:
        hint = "A re-embed to it is under way (manage.py reembed --wait to run it here)."
    else:
        hint = "Run manage.py reembed to switch to it without downtime."
    return [
        Warning(
            f"The configured embedding model is {configured.name}, but the stored vectors "
            f"are by {active.name}, which keeps serving searches.",
            hint=hint,
            id="retrieval.W001",
        )
    ]


@register(Tags.database)
def chunks_have_windows(app_configs: Any, **kwargs: Any) -> list[Warning]:
    """Windows on for the active model, but no chunk has any (a database from before them, or
    from while they were off): hybrid search then weighs plain chunk similarities as if
    they were the parts' and ranks worse until `manage.py embed_windows` has run."""
    from library import embedding_state
    from library.models import Chunk, ChunkWindow
    from retrieval import windows

    if not kwargs.get("databases"):
        return []
    try:
        active = embedding_state.active()
        if not windows.enabled_for(active.name):
            return []
        missing = (
            Chunk.objects.filter(embedding_model=active.name).exists()
            and not ChunkWindow.objects.filter(model=active.name).exists()
        )
    except DatabaseError:
        return []
    if not missing:
        return []
    return [
        Warning(
            f"Chunks embedded by {active.name} have no windows (RETRIEVAL_WINDOWS="
            f"{settings.RETRIEVAL_WINDOWS}), so hybrid search ranks them less well.",
            hint="Run manage.py embed_windows (or set RETRIEVAL_WINDOWS=off).",
            id="retrieval.W002",
        )
    ]
