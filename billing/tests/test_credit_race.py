"""Two actions that pass the credit check together are both carried out and debited.

The check and the debits are not one transaction (billing/services.py says why), so the
balance can end below zero, by at most what the actions in flight cost; the next action is
refused.
"""

from decimal import Decimal

from billing.services import balance, grant_credit, has_credit, record_usage


def test_two_actions_racing_at_the_edge_overdraw_by_at_most_their_cost(owner, settings):
    settings.MODEL_PRICES = {**settings.MODEL_PRICES, "priced": {"input_per_million": "1"}}
    grant_credit(user=owner, amount=Decimal("0.000001") - balance(owner), reason="almost spent")

    # Both requests check before either has been debited.
    first_may_go, second_may_go = has_credit(owner), has_credit(owner)
    for _ in range(2):
        record_usage(user=owner, kind="chat", model="priced", input_tokens=1_000)  # 0.001 each

    assert first_may_go and second_may_go
    assert balance(owner) == Decimal("0.000001") - Decimal("0.002")
    assert balance(owner) >= -2 * Decimal("0.001")
    assert not has_credit(owner)


def test_a_grant_after_an_overdraft_pays_it_back_first(owner, settings):
    settings.MODEL_PRICES = {**settings.MODEL_PRICES, "priced": {"input_per_million": "1"}}
    grant_credit(user=owner, amount=-balance(owner))
    record_usage(user=owner, kind="chat", model="priced", input_tokens=1_000)

    grant_credit(user=owner, amount=Decimal("0.0005"))

    assert balance(owner) == Decimal("-0.0005")
    assert not has_credit(owner)
