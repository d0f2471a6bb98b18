import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from billing.models import CreditEntry
from billing.services import balance, record_usage

PAGES = [
    "admin:billing_usage_changelist",
    "admin:billing_creditentry_changelist",
    "admin:billing_creditentry_add",
]


@pytest.fixture
def superuser(db):
    return get_user_model().objects.create_superuser(username="admin", password="admin-pass-1")


@pytest.mark.parametrize("page", PAGES)
def test_billing_admin_pages_load_for_a_superuser(client, superuser, owner, page):
    record_usage(user=owner, kind="embedding", model="local/multilingual-e5-small")
    client.force_login(superuser)

    response = client.get(reverse(page))

    assert response.status_code == 200


def test_the_usage_list_shows_totals_of_the_filtered_rows(client, superuser, owner, settings):
    settings.MODEL_PRICES = {**settings.MODEL_PRICES, "m": {"input_per_million": "1000"}}
    record_usage(user=owner, kind="chat", model="m", input_tokens=1000)
    record_usage(user=owner, kind="embedding", model="m", input_tokens=2000)
    client.force_login(superuser)

    response = client.get(reverse("admin:billing_usage_changelist"), {"kind__exact": "chat"})

    assert response.context["usage_totals"]["calls"] == 1
    assert "Totals of the rows shown: 1 call, cost 1.000000" in response.text
    assert [label for label, _, _ in response.context["usage_totals_by"]["kind"]] == ["chat"]


def test_a_grant_added_in_the_admin_is_credit(client, superuser, owner):
    start = balance(owner)
    client.force_login(superuser)

    response = client.post(
        reverse("admin:billing_creditentry_add"),
        {"user": owner.pk, "amount": "3", "reason": "Course"},
    )

    assert response.status_code == 302
    assert CreditEntry.objects.filter(kind="grant", reason="Course").exists()
    assert balance(owner) == start + 3


@pytest.mark.parametrize("page", PAGES)
def test_billing_admin_pages_send_a_normal_user_to_the_admin_login(client, owner, page):
    client.force_login(owner)

    response = client.get(reverse(page))

    assert response.status_code == 302
    assert response.url.startswith(reverse("admin:login"))
