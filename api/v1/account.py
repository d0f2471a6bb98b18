"""Who is calling, their credit and usage."""

from __future__ import annotations

from ninja import Router

from api.auth import ApiRequest
from api.errors import COMMON
from api.v1.schemas import AccountOut
from billing.services import balance, usage_summary, usage_totals

router = Router(tags=["account"])


@router.get("/me", response={200: AccountOut, **COMMON}, summary="You, your credit and usage")
def me(request: ApiRequest) -> dict:
    user = request.user
    totals = usage_totals(user=user)
    token = getattr(request, "token", None)
    return {
        "username": user.get_username(),
        "credit": balance(user),
        "cost_total": totals["cost"],
        "calls_total": totals["calls"],
        "token": token.name if token else None,
        "scope": token.scope if token else "write",
        "usage": [
            {
                "day": row["day"].isoformat(),
                "kind": row["kind"],
                "model": row["model"],
                "calls": row["calls"],
                "input_tokens": row["input_tokens"],
                "output_tokens": row["output_tokens"],
                "seconds": row["seconds"],
                "cost": row["cost"],
            }
            for row in usage_summary(user=user)[:200]
        ],
    }
