"""The credit gate for views: a billed action is refused with HTTP 402 once credit is spent."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import render
from django_htmx.http import reswap, retarget

from billing.services import credit_spent_message, has_credit

PAYMENT_REQUIRED = 402


def credit_spent_response(request: HttpRequest) -> HttpResponse:
    """A page, or for htmx a notice retargeted to the header's #credit-notice.

    base.html lets htmx swap a 402 (it swaps only 2xx by default) and still counts it as
    an error, so forms keep what the person typed.
    """
    context = {"message": credit_spent_message()}
    if getattr(request, "htmx", False):
        response = render(
            request, "billing/credit_spent.html#notice", context, status=PAYMENT_REQUIRED
        )
        return reswap(retarget(response, "#credit-notice"), "innerHTML")
    return render(request, "billing/credit_spent.html", context, status=PAYMENT_REQUIRED)


def credit_required(view: Callable[..., HttpResponseBase]) -> Callable[..., HttpResponseBase]:
    """Refuse the view with 402 when the signed-in user's credit is spent.

    Put it below @login_required, so that an anonymous request is sent to sign in first.
    """

    @functools.wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if not has_credit(request.user):  # type: ignore[arg-type]
            return credit_spent_response(request)
        return view(request, *args, **kwargs)

    return wrapped
