from decimal import Decimal

import pytest
from django.urls import reverse

from billing.services import grant_credit, record_usage


@pytest.fixture
def priced(settings):
    settings.MODEL_PRICES = {
        **settings.MODEL_PRICES,
        "owners-model": {"input_per_million": "1000"},
        "outsiders-model": {"input_per_million": "1000"},
    }


def test_the_usage_page_shows_the_balance_and_own_usage_with_costs(client, owner, priced):
    record_usage(user=owner, kind="chat", model="owners-model", input_tokens=1000)  # costs 1
    grant_credit(user=owner, amount=Decimal(4), reason="Seminar")
    client.force_login(owner)

    response = client.get(reverse("billing:usage"))

    assert response.status_code == 200
    assert "owners-model" in response.text
    assert "1.000000" in response.text
    assert "Seminar" in response.text
    assert response.context["balance"] == 5 - 1 + 4


def test_the_outsider_sees_none_of_the_owners_usage(client, owner, outsider, priced):
    record_usage(user=owner, kind="chat", model="owners-model", input_tokens=1000)
    record_usage(user=outsider, kind="chat", model="outsiders-model", input_tokens=1000)
    client.force_login(outsider)

    response = client.get(reverse("billing:usage"))

    assert "outsiders-model" in response.text
    assert "owners-model" not in response.text


def test_the_usage_page_asks_a_visitor_to_sign_in(client, db):
    response = client.get(reverse("billing:usage"))

    assert response.status_code == 302
    assert response.url.startswith(reverse("login"))


def test_the_header_links_to_the_usage_page(client, owner):
    client.force_login(owner)

    response = client.get(reverse("notebooks:list"))

    assert reverse("billing:usage") in response.text
