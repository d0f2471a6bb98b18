from __future__ import annotations

from decimal import Decimal

import pytest

from billing.services import balance, grant_credit


@pytest.fixture
def spend_all_credit():
    """Take away whatever credit the user has left, so the balance is exactly zero."""

    def spend(user) -> None:
        grant_credit(user=user, amount=-balance(user), reason="spent in a test")
        assert balance(user) == Decimal(0)

    return spend
