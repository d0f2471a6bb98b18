"""manage.py token create|list|revoke: personal access tokens for the API (docs/api.md)."""

from __future__ import annotations

import json
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError, CommandParser

from api.models import AccessToken
from api.tokens import TokenRefused, create_token, revoke_token, tokens_of
from ops.commands import DatabaseCommand


class Command(DatabaseCommand):
    help = "Create (printing the token alone), list and revoke a user's personal access tokens."

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        create = actions.add_parser("create", help="make a token and print it (shown only once)")
        create.add_argument("--user", required=True)
        create.add_argument("--name", required=True, help="a label to tell it apart")
        create.add_argument("--scope", choices=AccessToken.Scope.values, default="read")
        listing = actions.add_parser("list", help="the user's tokens, with their last use")
        listing.add_argument("--user", required=True)
        listing.add_argument("--json", action="store_true", help="print one JSON object per line")
        revoke = actions.add_parser("revoke", help="revoke a token by its id (from `token list`)")
        revoke.add_argument("--user", required=True)
        revoke.add_argument("id", type=int)

    def handle(self, *args: Any, **options: Any) -> None:
        user = get_user_model().objects.filter(username=options["user"]).first()
        if user is None:
            raise CommandError(f"No user {options['user']!r}.")
        try:
            if options["action"] == "create":
                made = create_token(user=user, name=options["name"], scope=options["scope"])
                self.stdout.write(made.secret)
            elif options["action"] == "revoke":
                token = revoke_token(user=user, token_id=options["id"])
                self.stderr.write(f"Revoked {token.pk}: {token.name}.")
            else:
                self._list(user, as_json=options["json"])
        except TokenRefused as exc:
            raise CommandError(str(exc)) from exc

    def _list(self, user: Any, *, as_json: bool) -> None:
        for token in tokens_of(user):
            row = {
                "id": token.pk,
                "name": token.name,
                "prefix": token.prefix,
                "scope": token.scope,
                "created_at": token.created_at.isoformat(),
                "last_used_at": token.last_used_at.isoformat() if token.last_used_at else None,
                "revoked": token.revoked_at is not None,
            }
            if as_json:
                self.stdout.write(json.dumps(row))
            else:
                state = (
                    "revoked" if row["revoked"] else f"last used {row['last_used_at'] or 'never'}"
                )
                self.stdout.write(
                    f"{token.pk}\t{token.prefix}…\t{token.scope}\t{token.name}\t{state}"
                )
