from __future__ import annotations

from typing import Any

from django.core.checks import Tags, Warning, register
from django.db import DatabaseError


# A database check (Django runs those in `migrate` and `check --database default`, which
# `make run` runs before it starts), since it reads the active model from the database.
@register(Tags.database)
def embedding_model_matches_the_settings(app_configs: Any, **kwargs: Any) -> list[Warning]:
    """A changed embedding setting takes effect only through `manage.py reembed`: until then
    the model that made the stored vectors keeps serving, and this says so."""
    from providers import embeddings

    if not kwargs.get("databases"):
        return []  # asked for no database: a plain `check`, or a test without one
    try:
        active = embeddings.active()
        target = embeddings.target()
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
