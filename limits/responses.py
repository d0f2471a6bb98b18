"""The refusals of the abuse limits: 429 (too many) and 413 (too large), each with a
message saying what was refused, which setting allows it and when to try again."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django_htmx.http import reswap, retarget

TOO_MANY_REQUESTS = 429
CONTENT_TOO_LARGE = 413


def wait_phrase(seconds: int) -> str:
    if seconds >= 120:
        minutes = (seconds + 59) // 60
        return ngettext("in %(n)d minute", "in %(n)d minutes", minutes) % {"n": minutes}
    return ngettext("in %(n)d second", "in %(n)d seconds", seconds) % {"n": seconds}


def refusal(
    request: HttpRequest, message: str, *, status: int, retry_after: int | None = None
) -> HttpResponse:
    """A page, or for htmx (and the page's own fetch calls, which send HX-Request) the
    notice alone, placed in the form whose action was refused."""
    is_htmx = request.headers.get("HX-Request") == "true"
    context = {"message": message, "status": status}
    if is_htmx:
        body = render_to_string("limits/refused.html#notice", context, request=request)
    else:
        body = render_to_string("limits/refused.html", context, request=request)
    response = HttpResponse(body, status=status)
    if is_htmx:
        # Shown where the action happened: appended to the form that was submitted.
        response = reswap(retarget(response, "closest form"), "beforeend")
    if retry_after:
        response["Retry-After"] = str(retry_after)
    return response


def too_many(request: HttpRequest, action: str, setting: str, retry_after: int) -> HttpResponse:
    message = _("You have reached the limit for %(action)s (%(setting)s). Try again %(wait)s.") % {
        "action": action,
        "setting": setting,
        "wait": wait_phrase(retry_after),
    }
    return refusal(request, message, status=TOO_MANY_REQUESTS, retry_after=retry_after)
