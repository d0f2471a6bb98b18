"""A page request while the database is away: a 503 page within seconds, not a hang.

Each query waits at most DATABASE_POOL_TIMEOUT for a connection; the first that fails ends
the request here, as Django's 500 handler (config/urls.py), with a page that needs no
database (no session, no user) and reloads itself.
"""

from __future__ import annotations

import sys

from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string
from django.utils.html import format_html
from django.utils.translation import gettext as _
from django.views import defaults

from ops.database import is_lost_database

RETRY_SECONDS = 5


def outage_message() -> str:
    """What a person is told where a page, a question or an upload met the outage."""
    return _(
        "Loupe cannot reach its database right now. Nothing you saved is lost; "
        "try again in a moment."
    )


def database_unavailable(request: HttpRequest | None = None) -> HttpResponse:
    """The page that reloads itself; for the page's own requests (htmx, and its fetch and
    upload calls, which send HX-Request) the sentence alone, which they show in place."""
    if request is not None and request.headers.get("HX-Request") == "true":
        body = format_html('<p class="note error" role="alert">{}</p>', outage_message())
    else:
        body = render_to_string("ops/database_unavailable.html", {"retry_seconds": RETRY_SECONDS})
    response = HttpResponse(body, status=503)
    response["Retry-After"] = str(RETRY_SECONDS)
    response["Cache-Control"] = "no-store"
    return response


def server_error(request: HttpRequest) -> HttpResponse:
    """Django's 500 page, or the 503 page when the error was a lost database."""
    exception = sys.exc_info()[1]
    if exception is not None and is_lost_database(exception):
        return database_unavailable(request)
    return defaults.server_error(request)
