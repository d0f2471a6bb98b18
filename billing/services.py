from __future__ import annotations

from django.contrib.auth.models import User

from billing.models import Usage


def record_usage(
    *,
    user: User | None,
    kind: str,
    model: str,
    input_tokens: int = 0,
    output_tokens: int = 0,
) -> Usage:
    return Usage.objects.create(
        user=user if user is not None and user.pk else None,
        kind=kind,
        model=model,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
    )
