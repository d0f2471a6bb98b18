"""The share dialog refuses a request no page of ours sends with 400 naming the field, and
shares with nobody."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.urls import reverse

from sharing.models import Membership


def test_a_person_named_with_a_nul_is_refused_and_nothing_shared(client, owner, notebook):
    get_user_model().objects.create_user("vic")
    client.force_login(owner)

    response = client.post(
        reverse("sharing:share", args=[notebook.pk]), {"person": "vic\x00", "role": "editor"}
    )

    assert response.status_code == 400
    assert "person: Null characters are not allowed" in response.text
    assert not Membership.objects.exists()


def test_an_outsider_still_gets_404_not_400(client, outsider, notebook):
    client.force_login(outsider)

    response = client.post(reverse("sharing:share", args=[notebook.pk]), {"person": "\x00"})

    assert response.status_code == 404
