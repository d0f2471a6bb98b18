"""Model prices: what one call to a model costs, in the unit of the users' credit.

Prices come from settings (MODEL_PRICES, a JSON object in the environment, and/or the JSON
file MODEL_PRICES_FILE; the environment wins) over built-in zero prices for the local
models. This module imports no Django models, so config/settings/ can use it to parse
the prices once at start-up.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from django.core.exceptions import ImproperlyConfigured

# What a price may say; every key is optional and missing ones cost nothing.
PRICE_KEYS = {
    "input_per_million": "per million input tokens",
    "output_per_million": "per million output tokens",
    "per_second": "per second of audio",
    "per_image": "per image or rendered page",
}
MILLION = Decimal(1_000_000)

# The local models run on the operator's own machine: priced, at zero, so that the start-up
# check has nothing to complain about and their usage rows still show what they did.
LOCAL_PREFIX = "local/"
BUILTIN_PRICES: dict[str, dict[str, str]] = {
    "local/multilingual-e5-small": {},
    "local/universal-sentence-encoder-multilingual-3": {},
    "local/rapidocr": {},
    "local/whisper-base": {},
    "local/espeak-ng": {},
    "local/piper-joe": {},
}


@dataclass(frozen=True)
class Price:
    input_per_million: Decimal = Decimal(0)
    output_per_million: Decimal = Decimal(0)
    per_second: Decimal = Decimal(0)
    per_image: Decimal = Decimal(0)

    def cost(
        self,
        *,
        input_tokens: int = 0,
        output_tokens: int = 0,
        seconds: Decimal | float = 0,
        images: int = 0,
    ) -> Decimal:
        return (
            Decimal(input_tokens) * self.input_per_million / MILLION
            + Decimal(output_tokens) * self.output_per_million / MILLION
            + Decimal(str(seconds)) * self.per_second
            + Decimal(images) * self.per_image
        )


def parse_price(model: str, raw: Any) -> Price:
    """One model's price from its JSON form; ValueError names what is wrong."""
    if not isinstance(raw, dict):
        raise ValueError(
            f'the price of {model!r} must be an object like {{"input_per_million": 0.15}}'
        )
    unknown = sorted(set(raw) - set(PRICE_KEYS))
    if unknown:
        raise ValueError(
            f"the price of {model!r} has unknown keys {', '.join(unknown)}; "
            f"use {', '.join(PRICE_KEYS)}"
        )
    values: dict[str, Decimal] = {}
    for key, value in raw.items():
        try:
            number = Decimal(str(value))
        except InvalidOperation:
            number = Decimal("NaN")
        if isinstance(value, bool) or not number.is_finite() or number < 0:
            raise ValueError(f"the price of {model!r} has {key} {value!r}; use a number >= 0")
        values[key] = number
    return Price(**values)


def read_prices(raw_json: str, file_path: str) -> dict[str, dict[str, Any]]:
    """The configured prices, checked: built-ins, then the file, then the environment.

    Raises ImproperlyConfigured naming the setting whose value cannot be used.
    """
    prices: dict[str, dict[str, Any]] = dict(BUILTIN_PRICES)
    sources: list[tuple[str, str]] = []
    if file_path:
        try:
            sources.append((f"MODEL_PRICES_FILE ({file_path})", Path(file_path).read_text()))
        except OSError as exc:
            raise ImproperlyConfigured(f"MODEL_PRICES_FILE cannot be read: {exc}") from exc
    if raw_json:
        sources.append(("MODEL_PRICES", raw_json))
    for setting, text in sources:
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise ImproperlyConfigured(f"{setting} is not valid JSON: {exc}") from exc
        if not isinstance(data, dict):
            raise ImproperlyConfigured(
                f'{setting} must be a JSON object: {{"model": {{"input_per_million": 0.15}}}}'
            )
        for model, price in data.items():
            try:
                parse_price(model, price)
            except ValueError as exc:
                raise ImproperlyConfigured(f"{setting}: {exc}") from exc
        prices.update(data)
    return prices


def price_for(model: str) -> Price | None:
    """The model's price from settings.MODEL_PRICES, or None when it has none."""
    from django.conf import settings

    prices = getattr(settings, "MODEL_PRICES", None) or BUILTIN_PRICES
    if model in prices:
        return parse_price(model, prices[model])
    if model in BUILTIN_PRICES:
        return parse_price(model, BUILTIN_PRICES[model])
    if model.startswith(LOCAL_PREFIX):
        # Every local chat model (providers/local_model.py names them so) runs here, free.
        return Price()
    return None
