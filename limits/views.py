"""Sign-in with throttling: after too many failed attempts for one user name (and, when
configured, from one address) further attempts are refused with 429 until the window ends."""

from __future__ import annotations

import os
import threading
from typing import Any

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext as _

from limits.forms import SignInAttemptForm
from limits.responses import TOO_MANY_REQUESTS, refusal, wait_phrase
from limits.services import hit, peek
from web.forms import bad_request

# Checking a password is most of a second of CPU (PBKDF2), and the sign-in holds a database
# connection from its first query to its end. Twenty at once on two cores would each hold
# theirs for seconds and run the pool dry: a sign-in waiting past DATABASE_POOL_TIMEOUT
# would be told the database is unreachable. So sign-ins take turns, one per core; those
# waiting hold no connection and no more CPU than the turns give, and no sign-in is slower
# for the queue.
SIGN_IN_TURNS = threading.BoundedSemaphore(len(os.sched_getaffinity(0)))


def _keys(request: HttpRequest, attempt: SignInAttemptForm) -> list[tuple[str, Any]]:
    username = attempt.cleaned_data["username"]
    # The client's own address behind a proxy named in FORWARDED_ALLOW_IPS (config/proxy.py).
    address = request.META.get("REMOTE_ADDR", "")
    return [
        (f"login:user:{username}", settings.LOGIN_FAILURES_PER_USER),
        (f"login:address:{address}", settings.LOGIN_FAILURES_PER_ADDRESS),
    ]


class ThrottledLoginView(auth_views.LoginView):
    attempt: SignInAttemptForm  # the attempt being signed in, read in post

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        with SIGN_IN_TURNS:
            return self._post(request, *args, **kwargs)

    def _post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        attempt = SignInAttemptForm(request.POST)
        if not attempt.is_valid():
            return bad_request(attempt)
        self.attempt = attempt
        for key, rate in _keys(request, attempt):
            verdict = peek(key, rate)
            if not verdict.allowed:
                message = _(
                    "Too many failed sign-in attempts. Try again %(wait)s, or ask your "
                    "administrator to reset your password."
                ) % {"wait": wait_phrase(verdict.retry_after)}
                return refusal(
                    request, message, status=TOO_MANY_REQUESTS, retry_after=verdict.retry_after
                )
        return super().post(request, *args, **kwargs)

    def form_invalid(self, form: Any) -> HttpResponse:
        for key, rate in _keys(self.request, self.attempt):
            hit(key, rate)
        return super().form_invalid(form)
