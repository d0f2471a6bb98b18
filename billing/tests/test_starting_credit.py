from decimal import Decimal

from django.contrib.auth import get_user_model

from billing.models import CreditEntry
from billing.services import balance, grant_starting_credit, has_credit


def test_a_new_user_starts_with_the_starting_credit(db, settings):
    settings.STARTING_CREDIT = Decimal("2.50")

    user = get_user_model().objects.create_user(username="new", password="x")

    assert balance(user) == Decimal("2.50")
    assert has_credit(user)


def test_a_user_from_before_billing_gets_the_starting_credit_once(db, settings):
    settings.STARTING_CREDIT = Decimal(3)
    user = get_user_model().objects.create_user(username="old", password="x")
    CreditEntry.objects.filter(user=user).delete()  # as if created before billing existed

    assert balance(user) == Decimal(3)
    grant_starting_credit(user)
    assert balance(user) == Decimal(3)
    assert CreditEntry.objects.filter(user=user).count() == 1


def test_a_starting_credit_of_zero_leaves_new_users_without_credit(db, settings):
    settings.STARTING_CREDIT = Decimal(0)

    user = get_user_model().objects.create_user(username="new", password="x")

    assert not has_credit(user)
