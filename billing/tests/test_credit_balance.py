"""The balance row the database keeps equals the ledger's sum, however the ledger changes,
and concurrent debits of one user each count once."""

from __future__ import annotations

import threading
from decimal import Decimal

from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import Sum

from billing.models import CreditBalance, CreditEntry
from billing.services import balance, grant_credit, record_usage


def _ledger(user) -> Decimal:
    return CreditEntry.objects.filter(user=user).aggregate(total=Sum("amount"))["total"]


def test_the_balance_follows_every_entry(owner, settings):
    settings.MODEL_PRICES = {**settings.MODEL_PRICES, "priced": {"input_per_million": "1"}}
    start = balance(owner)  # the starting credit, granted on first use
    assert start == settings.STARTING_CREDIT
    grant_credit(user=owner, amount=Decimal("2.5"), reason="top-up")
    for _ in range(3):
        record_usage(user=owner, kind="chat", model="priced", input_tokens=1_000)

    assert balance(owner) == start + Decimal("2.5") - Decimal("0.003") == _ledger(owner)
    row = CreditBalance.objects.get(user=owner)
    assert row.started and row.amount == _ledger(owner)


def test_a_changed_or_deleted_entry_moves_the_balance_too(owner):
    balance(owner)
    entry = grant_credit(user=owner, amount=Decimal("1"), reason="by mistake")
    CreditEntry.objects.filter(pk=entry.pk).update(amount=Decimal("3"))
    assert balance(owner) == _ledger(owner)
    CreditEntry.objects.filter(pk=entry.pk).delete()
    assert balance(owner) == _ledger(owner)


def test_deleting_a_user_takes_their_balance(owner):
    balance(owner)
    owner_id = owner.pk
    get_user_model().objects.filter(pk=owner_id).delete()
    assert not CreditBalance.objects.filter(user_id=owner_id).exists()


def test_concurrent_debits_each_count_once(transactional_db, settings):
    settings.MODEL_PRICES = {**settings.MODEL_PRICES, "priced": {"input_per_million": "1"}}
    user = get_user_model().objects.create_user(username="busy")
    before = balance(user)

    def debit() -> None:
        try:
            for _ in range(10):
                record_usage(user=user, kind="chat", model="priced", input_tokens=1_000)
        finally:
            connection.close()

    threads = [threading.Thread(target=debit) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert balance(user) == before - 40 * Decimal("0.001") == _ledger(user)
