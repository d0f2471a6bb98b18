"""Creating, finding and revoking personal access tokens (api/models.py)."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.contrib.auth.models import User
from django.db.models import QuerySet
from django.utils import timezone

from api.models import AccessToken
from texts.errors import UserFacingError

PREFIX = "loupe_"
# A token's last use is written at most this often: one UPDATE per request would be a
# write on every read.
LAST_USE_PRECISION = timedelta(minutes=1)


class TokenRefused(UserFacingError):
    """A token cannot be made as asked (no name, an unknown scope)."""


@dataclass(frozen=True)
class NewToken:
    token: AccessToken
    secret: str  # shown once, never stored


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def create_token(*, user: User, name: str, scope: str = AccessToken.Scope.READ) -> NewToken:
    name = " ".join(name.split())
    if not name:
        raise TokenRefused("A token needs a name, to tell it apart from your other tokens.")
    if len(name) > AccessToken._meta.get_field("name").max_length:  # type: ignore[operator]
        raise TokenRefused("A token's name is at most 100 characters.")
    if scope not in AccessToken.Scope.values:
        raise TokenRefused("A token's scope is read or write.")
    secret = PREFIX + secrets.token_urlsafe(32)
    token = AccessToken.objects.create(
        user=user, name=name, scope=scope, digest=digest(secret), prefix=secret[:12]
    )
    return NewToken(token=token, secret=secret)


def tokens_of(user: User) -> QuerySet[AccessToken]:
    return AccessToken.objects.filter(user=user)


def find_token(secret: str) -> AccessToken | None:
    """The live token `secret` is, with its user; None for anything else (unknown, revoked,
    a deactivated account). Its last use is noted."""
    if not secret.startswith(PREFIX) or len(secret) > 100:
        return None
    token = (
        AccessToken.objects.select_related("user")
        .filter(digest=digest(secret), revoked_at__isnull=True, user__is_active=True)
        .first()
    )
    if token is None:
        return None
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at > LAST_USE_PRECISION:
        AccessToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
    return token


def revoke_token(*, user: User, token_id: int) -> AccessToken:
    token = tokens_of(user).filter(pk=token_id).first()
    if token is None:
        raise TokenRefused(f"{user.get_username()} has no token {token_id}.")
    token.revoke()
    return token
