from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import Error, register

from billing.prices import price_for

# The settings that name a model the app calls through OPENAI_BASE_URL.
MODEL_SETTINGS = ("CHAT_MODEL", "EMBEDDING_MODEL", "VISION_MODEL", "STT_MODEL", "TTS_MODEL")


@register()
def model_prices(app_configs: Any, **kwargs: Any) -> list[Error]:
    """Every configured model has a price: an unpriced one would run up an unseen bill."""
    errors: list[Error] = []
    if not settings.OPENAI_BASE_URL:
        return errors  # only the local models serve, and they are priced (at zero)
    for name in MODEL_SETTINGS:
        model = getattr(settings, name, "")
        if not model:
            continue
        try:
            price = price_for(model)
        except ValueError as exc:
            errors.append(Error(f"The price of {model} cannot be used: {exc}.", id="billing.E002"))
            continue
        if price is None:
            errors.append(
                Error(
                    f"The model {model} ({name}) has no price.",
                    hint=f"Add it to MODEL_PRICES (or the file MODEL_PRICES_FILE), e.g. "
                    f'MODEL_PRICES=\'{{"{model}": {{"input_per_million": 0.15, '
                    f'"output_per_million": 0.6}}}}\'; keys: input_per_million, '
                    "output_per_million, per_second, per_image.",
                    id="billing.E001",
                )
            )
    return errors
