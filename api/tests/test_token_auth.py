"""Who may call the API: a live token (no CSRF), or the signed-in browser (with CSRF); each
refusal a JSON error with a stable code."""

from __future__ import annotations

from django.test import Client

from api.models import AccessToken
from api.tokens import create_token
from notebooks.models import Notebook

NOTEBOOKS = "/api/v1/notebooks"


def test_no_credentials_is_401_json(client):
    response = client.get(NOTEBOOKS)
    assert response.status_code == 401
    assert response.json()["code"] == "not_authenticated"


def test_an_unknown_or_revoked_token_is_401(client, owner):
    made = create_token(user=owner, name="old")
    made.token.revoke()
    for secret in (made.secret, "loupe_nope", "garbage"):
        response = client.get(NOTEBOOKS, headers={"Authorization": f"Bearer {secret}"})
        assert response.status_code == 401, secret
        assert response.json()["code"] == "invalid_token"


def test_a_token_needs_no_csrf_and_notes_its_last_use(owner, write_token):
    client = Client(enforce_csrf_checks=True)
    response = client.post(
        NOTEBOOKS,
        {"title": "From a script"},
        content_type="application/json",
        headers={"Authorization": f"Bearer {write_token}"},
    )
    assert response.status_code == 201, response.content
    assert Notebook.objects.get(title="From a script").owner == owner
    assert AccessToken.objects.get(name="script").last_used_at is not None


def test_a_read_token_reads_but_may_not_write(client, owner, notebook, read_token):
    headers = {"Authorization": f"Bearer {read_token}"}
    assert client.get(NOTEBOOKS, headers=headers).json()[0]["title"] == "Research"

    response = client.post(
        NOTEBOOKS, {"title": "No"}, content_type="application/json", headers=headers
    )

    assert response.status_code == 403
    assert response.json()["code"] == "read_only_token"
    assert not Notebook.objects.filter(title="No").exists()


def test_a_session_must_send_the_csrf_token(owner):
    client = Client(enforce_csrf_checks=True)
    client.force_login(owner)
    assert client.get(NOTEBOOKS).status_code == 200

    refused = client.post(NOTEBOOKS, {"title": "Forged"}, content_type="application/json")
    assert refused.status_code == 403
    assert refused.json()["code"] == "csrf_failed"

    client.get("/tokens/")  # sets the CSRF cookie
    csrf = client.cookies["csrftoken"].value
    allowed = client.post(
        NOTEBOOKS, {"title": "Mine"}, content_type="application/json", headers={"X-CSRFToken": csrf}
    )
    assert allowed.status_code == 201


def test_each_token_has_its_own_rate(client, owner, settings):
    from limits.rates import Rate

    settings.API_TOKEN_RATE = Rate(2, 60)
    first = create_token(user=owner, name="one").secret
    second = create_token(user=owner, name="two").secret

    codes = [
        client.get(NOTEBOOKS, headers={"Authorization": f"Bearer {first}"}).status_code
        for _ in range(3)
    ]
    assert codes == [200, 200, 429]
    last = client.get(NOTEBOOKS, headers={"Authorization": f"Bearer {first}"})
    assert last.json()["code"] == "rate_limited"
    assert client.get(NOTEBOOKS, headers={"Authorization": f"Bearer {second}"}).status_code == 200


def test_a_body_over_the_limit_is_refused_in_json(client, write_token, settings):
    settings.REQUEST_MAX_BYTES = 1000

    response = client.post(
        NOTEBOOKS,
        {"title": "x" * 2000},
        content_type="application/json",
        headers={"Authorization": f"Bearer {write_token}"},
    )

    assert response.status_code == 413
    assert response.json()["code"] == "too_large"
