"""Personal access tokens: made, shown once, stored hashed, listed with last use, revoked."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from api.models import AccessToken
from api.tokens import create_token, digest, find_token


def test_a_token_is_stored_as_its_digest_only(owner):
    made = create_token(user=owner, name="laptop", scope="write")

    stored = AccessToken.objects.get()
    assert made.secret.startswith("loupe_") and len(made.secret) > 40
    assert stored.digest == digest(made.secret)
    assert made.secret not in {stored.digest, stored.prefix, stored.name}
    assert find_token(made.secret) == stored


def test_a_revoked_token_or_a_deactivated_user_finds_nothing(owner):
    made = create_token(user=owner, name="laptop")
    made.token.revoke()
    assert find_token(made.secret) is None
    again = create_token(user=owner, name="phone")
    owner.is_active = False
    owner.save()
    assert find_token(again.secret) is None
    assert find_token("loupe_not-a-token") is None


def test_the_command_prints_the_token_alone_then_lists_and_revokes_it(owner):
    out = io.StringIO()
    call_command(
        "token", "create", "--user", "owner", "--name", "ci", "--scope", "write", stdout=out
    )
    secret = out.getvalue().strip()
    assert "\n" not in secret and find_token(secret).scope == "write"

    listed = io.StringIO()
    call_command("token", "list", "--user", "owner", "--json", stdout=listed)
    row = json.loads(listed.getvalue())
    assert row["name"] == "ci" and row["scope"] == "write" and row["last_used_at"] is not None
    assert secret not in listed.getvalue()

    call_command("token", "revoke", "--user", "owner", str(row["id"]), stderr=io.StringIO())
    assert find_token(secret) is None


def test_the_command_refuses_another_users_token_and_a_bad_scope(owner, outsider):
    theirs = create_token(user=outsider, name="theirs")
    with pytest.raises(CommandError):
        call_command("token", "revoke", "--user", "owner", str(theirs.token.pk))
    assert find_token(theirs.secret) is not None
    with pytest.raises(CommandError):
        call_command("token", "create", "--user", "owner", "--name", "x", "--scope", "admin")
    with pytest.raises(CommandError):
        call_command("token", "create", "--user", "nobody", "--name", "x")


def test_the_page_shows_a_new_token_once_then_lists_it(client, owner):
    client.force_login(owner)

    made = client.post(reverse("tokens:create"), {"name": "notebook script", "scope": "write"})

    token = AccessToken.objects.get()
    secret = made.text.split('class="token-secret">')[1].split("<")[0]
    assert find_token(secret) == token and token.scope == "write"
    assert made["Cache-Control"] == "no-store"
    page = client.get(reverse("tokens:list"))
    assert "notebook script" in page.text and token.prefix in page.text
    assert secret not in page.text


def test_the_page_revokes_ones_own_token_only(client, owner, outsider):
    mine = create_token(user=owner, name="mine")
    theirs = create_token(user=outsider, name="theirs")
    client.force_login(owner)

    assert client.post(reverse("tokens:revoke", args=[theirs.token.pk])).status_code == 404
    assert client.post(reverse("tokens:revoke", args=[mine.token.pk])).status_code == 302

    assert find_token(mine.secret) is None
    assert find_token(theirs.secret) is not None
    assert "theirs" not in client.get(reverse("tokens:list")).text


def test_a_token_without_a_name_is_refused_on_the_page(client, owner):
    client.force_login(owner)
    response = client.post(reverse("tokens:create"), {"name": "  ", "scope": "read"})
    assert response.status_code == 200 and "needs a name" in response.text
    assert not AccessToken.objects.exists()
