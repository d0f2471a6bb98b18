"""A page request while the database is away: a 503 page within seconds, not a hang.

Each query waits at most DATABASE_POOL_TIMEOUT for a connection; the first that fails ends
the request here, as Django's 500 handler (config/urls.py), with a page that needs no
database (no session, no user) and reloads itself.
"""

from __future__ import annotations

import sys

from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string
from django.views import defaults

from ops.database import is_lost_database

RETRY_SECONDS = 5


def database_unavailable() -> HttpResponse:
    body = render_to_string("ops/database_unavailable.html", {"retry_seconds": RETRY_SECONDS})
    response = HttpResponse(body, status=503)
    response["Retry-After"] = str(RETRY_SECONDS)
    response["Cache-Control"] = "no-store"
    return response


def server_error(request: HttpRequest) -> HttpResponse:
    """Django's 500 page, or the 503 page when the error was a lost database."""
    exception = sys.exc_info()[1]
    if exception is not None and is_lost_database(exception):
        return database_unavailable()
    return defaults.server_error(request)
