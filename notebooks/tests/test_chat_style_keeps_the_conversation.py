"""Saving the chat style brings the reader back to the conversation they had open, and never
to an address outside the notebook."""

from __future__ import annotations

from django.urls import reverse

from notebooks.models import Conversation, Notebook

STYLE = {"goal": "learning", "length": "longer", "instructions": ""}


def test_saving_the_chat_style_returns_to_the_open_conversation(client, owner, notebook):
    older = Conversation.objects.create(notebook=notebook, user=owner, title="Older")
    Conversation.objects.create(notebook=notebook, user=owner, title="Newer")
    url = reverse("notebooks:chat_style", args=[notebook.pk])
    here = reverse("notebooks:conversation", args=[notebook.pk, older.pk])
    client.force_login(owner)
    page = client.get(here).text
    assert f'name="next" value="{here}"' in page

    response = client.post(url, {**STYLE, "next": here})

    assert response.status_code == 302 and response.url == here


def test_the_way_back_stays_inside_the_notebook(client, owner, notebook):
    other = Notebook.objects.create(owner=owner, title="Other")
    url = reverse("notebooks:chat_style", args=[notebook.pk])
    home = reverse("notebooks:detail", args=[notebook.pk])
    client.force_login(owner)
    for elsewhere in (
        "https://evil.example/",
        "//evil.example/",
        reverse("notebooks:detail", args=[other.pk]),
    ):
        assert client.post(url, {**STYLE, "next": elsewhere}).url == home
