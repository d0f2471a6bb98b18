"""The tokens page refuses a request no page of ours sends with 400 naming the field, and
keeps asking for the lesser scope when none is sent."""

from __future__ import annotations

from django.urls import reverse

from api.models import AccessToken


def test_a_token_name_with_a_nul_is_refused_and_no_token_made(client, owner):
    client.force_login(owner)

    response = client.post(reverse("tokens:create"), {"name": "a\x00b", "scope": "read"})

    assert response.status_code == 400
    assert "name: Null characters are not allowed" in response.text
    assert not AccessToken.objects.exists()


def test_a_token_asked_without_a_scope_may_only_read(client, owner):
    client.force_login(owner)

    response = client.post(reverse("tokens:create"), {"name": "script"})

    assert response.status_code == 200
    assert AccessToken.objects.get().scope == AccessToken.Scope.READ
