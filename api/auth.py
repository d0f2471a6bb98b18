"""Who is calling the API: a personal access token (`Authorization: Bearer loupe_…`, no CSRF:
a program holds it, no browser sends it on its own) or the browser's session (with CSRF, as
every form). A token request acts as the token's user, with the same access rules, billing
and limits as their pages, and is refused writing with a read-only token."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.http import HttpRequest
from ninja.security import APIKeyCookie, HttpBearer

from api.errors import ApiError
from api.models import AccessToken
from api.tokens import find_token
from limits.services import hit


class ApiRequest(HttpRequest):
    user: User
    token: AccessToken | None


def token_user(request: HttpRequest, secret: str, *, write: bool) -> User:
    """The user of a live token: 401 for any other string, 403 writing with a read token,
    429 past the token's own rate (API_TOKEN_RATE)."""
    token = find_token(secret)
    if token is None:
        raise ApiError(401, "invalid_token", "The token is unknown or revoked.")
    verdict = hit(f"api:token:{token.pk}", settings.API_TOKEN_RATE)
    if not verdict.allowed:
        raise ApiError(
            429,
            "rate_limited",
            f"Too many requests with this token: retry in {verdict.retry_after} s.",
        )
    if write and not token.may_write:
        raise ApiError(403, "read_only_token", "This token may read but not write.")
    request.user = token.user
    request.token = token  # type: ignore[attr-defined]
    return token.user


class TokenAuth(HttpBearer):
    def __init__(self, *, write: bool = False) -> None:
        super().__init__()
        self.write = write

    def authenticate(self, request: HttpRequest, token: str) -> User | None:
        return token_user(request, token, write=self.write)


class SessionAuth(APIKeyCookie):
    """The signed-in browser, CSRF checked (ninja's APIKeyCookie does before this)."""

    param_name = settings.SESSION_COOKIE_NAME

    def _get_key(self, request: HttpRequest) -> str | None:
        # No session at all: not signed in (401), rather than a CSRF refusal (403).
        if self.param_name not in request.COOKIES:
            return None
        return super()._get_key(request)

    def authenticate(self, request: HttpRequest, key: str | None) -> Any:
        user = request.user
        if user.is_authenticated and user.is_active:
            request.token = None  # type: ignore[attr-defined]
            return user
        return None


READ = [TokenAuth(), SessionAuth()]
WRITE = [TokenAuth(write=True), SessionAuth()]
