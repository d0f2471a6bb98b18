"""Failed sign-ins are throttled per user name (and per address when configured)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from limits.rates import Rate


@pytest.fixture
def throttled(settings):
    settings.LOGIN_FAILURES_PER_USER = Rate(3, 900)
    settings.LOGIN_FAILURES_PER_ADDRESS = Rate(0, 1)


def _sign_in(client, username, password):
    return client.post(reverse("login"), {"username": username, "password": password})


def test_after_too_many_failures_even_the_right_password_is_refused(client, owner, throttled):
    failures = [_sign_in(client, "owner", "wrong").status_code for _ in range(3)]

    refused = _sign_in(client, "owner", "owner-pass-123")

    assert failures == [200, 200, 200]  # the form again, with its error
    assert refused.status_code == 429
    assert "Too many failed sign-in attempts" in refused.text
    assert int(refused["Retry-After"]) > 0
    assert "_auth_user_id" not in client.session


def test_the_user_name_is_throttled_whatever_its_case(client, owner, throttled):
    for name in ("owner", "OWNER", " Owner "):
        _sign_in(client, name, "wrong")

    assert _sign_in(client, "owner", "owner-pass-123").status_code == 429


def test_another_user_can_still_sign_in(client, owner, outsider, throttled):
    for _ in range(3):
        _sign_in(client, "owner", "wrong")

    response = _sign_in(client, "outsider", "outsider-pass-123")

    assert response.status_code == 302
    assert client.session["_auth_user_id"] == str(outsider.pk)


def test_successful_sign_ins_do_not_count(client, owner, throttled):
    for _ in range(5):
        assert _sign_in(client, "owner", "owner-pass-123").status_code == 302
        client.logout()


def test_the_address_limit_counts_failures_across_user_names(client, owner, settings):
    settings.LOGIN_FAILURES_PER_USER = Rate(0, 1)
    settings.LOGIN_FAILURES_PER_ADDRESS = Rate(2, 900)
    _sign_in(client, "alice", "wrong")
    _sign_in(client, "bob", "wrong")

    assert _sign_in(client, "owner", "owner-pass-123").status_code == 429


def test_one_address_trying_many_names_is_throttled_by_default(client, owner):
    # Out of the box: 20 failures from one address in 15 minutes, whatever names they try.
    for n in range(20):
        assert _sign_in(client, f"guess{n}", "wrong").status_code == 200

    assert _sign_in(client, "owner", "owner-pass-123").status_code == 429


def test_a_user_name_no_page_sends_is_refused_naming_the_field(client, owner):
    # PostgreSQL stores no NUL: the attempt is refused before anything counts it.
    response = client.post(reverse("login"), {"username": "own\u0000er", "password": "x"})

    assert response.status_code == 400
    assert "username:" in response.content.decode()
