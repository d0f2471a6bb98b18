"""Per-user rate limits on the actions that cost money or work: asking, adding sources,
generating. One line on a view: `@rate_limited("ask")`, below @login_required."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.http import HttpRequest
from django.http.response import HttpResponseBase
from django.utils.translation import gettext_lazy as _

from limits.responses import too_many
from limits.services import hit

# The action's setting (a limits.rates.Rate) and how the refusal names the action.
ACTIONS = {
    "ask": ("RATE_LIMIT_ASK", _("asking questions")),
    "upload": ("RATE_LIMIT_UPLOAD", _("adding sources")),
    "generate": ("RATE_LIMIT_GENERATE", _("generating documents")),
}


def rate_limited(action: str) -> Callable[[Callable[..., HttpResponseBase]], Callable[..., Any]]:
    """Refuse the view with 429 once the signed-in user has done `action` more often than
    its setting allows; the views of one action share one count."""
    setting, name = ACTIONS[action]  # KeyError at import for an unknown action

    def decorate(view: Callable[..., HttpResponseBase]) -> Callable[..., HttpResponseBase]:
        @functools.wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
            verdict = hit(f"{action}:user:{request.user.pk}", getattr(settings, setting))
            if not verdict.allowed:
                return too_many(request, str(name), setting, verdict.retry_after)
            return view(request, *args, **kwargs)

        return wrapped

    return decorate
