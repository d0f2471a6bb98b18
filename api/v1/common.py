"""What the API's routers share: the notebook a request may use, and the gate of a billed
action (credit, then the action's rate: the same count as the pages')."""

from __future__ import annotations

from django.conf import settings

from api.auth import ApiRequest
from api.errors import ApiError
from billing.services import credit_spent_message, has_credit
from limits.decorators import ACTIONS
from limits.services import hit
from notebooks.models import Notebook
from sharing import access
from sharing.models import Role


def get_notebook(request: ApiRequest, notebook_id: int, need: Role = Role.VIEWER) -> Notebook:
    """The notebook if the caller may do `need` there; 404 for anyone who may not read it
    (sharing/access.py), 403 for a reader asking for more than their role."""
    return access.get_notebook(request.user, notebook_id, need)


def billed(request: ApiRequest, action: str) -> None:
    """402 once the caller's credit is spent, 429 past the action's rate (RATE_LIMIT_*)."""
    if not has_credit(request.user):
        raise ApiError(402, "credit_spent", credit_spent_message())
    setting, name = ACTIONS[action]
    verdict = hit(f"{action}:user:{request.user.pk}", getattr(settings, setting))
    if not verdict.allowed:
        raise ApiError(
            429,
            "rate_limited",
            f"You have reached the limit for {name} ({setting}): retry in {verdict.retry_after} s.",
        )
