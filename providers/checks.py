from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import Error, register


@register()
def model_configuration(app_configs: Any, **kwargs: Any) -> list[Error]:
    if not settings.OPENAI_BASE_URL:
        return []
    errors = []
    for name in ("CHAT_MODEL", "EMBEDDING_MODEL"):
        if not getattr(settings, name):
            errors.append(
                Error(
                    f"OPENAI_BASE_URL is set but {name} is not.",
                    hint=f"Set {name} to a model the endpoint serves, or unset OPENAI_BASE_URL "
                    "to use the local default models.",
                    id="providers.E001",
                )
            )
    return errors
