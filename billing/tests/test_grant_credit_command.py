from decimal import Decimal

import pytest
from django.core.management import CommandError, call_command

from billing.models import CreditEntry
from billing.services import balance


def test_grant_credit_adds_to_the_balance_with_the_reason(owner, settings, capsys):
    start = balance(owner)

    call_command("grant_credit", "owner", "7.25", reason="Thesis project")

    assert balance(owner) == start + Decimal("7.25")
    entry = CreditEntry.objects.get(kind=CreditEntry.Kind.GRANT)
    assert entry.reason == "Thesis project"
    assert "Granted 7.25 to owner" in capsys.readouterr().out


def test_grant_credit_names_an_unknown_user(db):
    with pytest.raises(CommandError, match="no user 'nobody'"):
        call_command("grant_credit", "nobody", "5")


def test_grant_credit_refuses_an_amount_that_is_not_a_number(owner):
    with pytest.raises(CommandError, match="AMOUNT must be a number"):
        call_command("grant_credit", "owner", "lots")
