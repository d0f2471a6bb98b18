from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import Error, Warning, register


@register()
def model_configuration(app_configs: Any, **kwargs: Any) -> list[Error | Warning]:
    if not settings.OPENAI_BASE_URL:
        from providers.embeddings import LOCAL_DEFAULT, LOCAL_MODELS

        name = settings.EMBEDDING_MODEL
        if name and name not in LOCAL_MODELS:
            return [
                Warning(
                    f"EMBEDDING_MODEL is {name}, which is no local model, and OPENAI_BASE_URL "
                    f"is unset: the local default {LOCAL_DEFAULT} embeds instead.",
                    hint="Set EMBEDDING_MODEL to one of "
                    + ", ".join(sorted(LOCAL_MODELS))
                    + ", or set OPENAI_BASE_URL to the server that serves it.",
                    id="providers.W001",
                )
            ]
        return []
    errors: list[Error | Warning] = []
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


@register()
def speech_engine(app_configs: Any, **kwargs: Any) -> list[Warning]:
    """Audio overviews need a speech engine: say so at start-up, not at the first overview."""
    from providers import tts

    try:
        tts.engine_name()
    except tts.SpeechUnavailable as exc:
        return [Warning(str(exc), id="providers.W002")]
    return []
