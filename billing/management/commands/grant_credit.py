from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError, CommandParser

from billing.services import balance, grant_credit
from ops.commands import DatabaseCommand


class Command(DatabaseCommand):
    help = "Add credit to a user's ledger (a negative amount takes some away)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("user", help="username")
        parser.add_argument("amount", help="in the unit of the prices, e.g. 10 or 2.50")
        parser.add_argument("--reason", default="", help="shown to the user on the usage page")

    def handle(self, *args: Any, **options: Any) -> None:
        user = get_user_model().objects.filter(username=options["user"]).first()
        if user is None:
            raise CommandError(f"There is no user {options['user']!r}.")
        try:
            amount = Decimal(options["amount"])
        except InvalidOperation as exc:
            raise CommandError(f"AMOUNT must be a number, got {options['amount']!r}.") from exc
        if not amount.is_finite() or amount == 0:
            raise CommandError(f"AMOUNT must be a number other than 0, got {options['amount']!r}.")
        grant_credit(user=user, amount=amount, reason=options["reason"])
        self.stdout.write(
            f"Granted {amount} to {user.get_username()}; balance {balance(user):.4f}."
        )
