"""A request no page of ours sends (an id that is not a number, a switch other than 0 or 1)
is refused with 400 naming the field, and changes nothing; the page's own values still work."""

from __future__ import annotations

from django.urls import reverse

from notebooks.models import Conversation, Message, Note
from notebooks.tests.factories import make_source
from retrieval.chosen_sources import source_choice


def test_a_question_naming_a_conversation_by_words_is_refused_and_not_asked(
    client, owner, notebook
):
    client.force_login(owner)

    for name in ("ask", "ask_stream"):
        response = client.post(
            reverse(f"notebooks:{name}", args=[notebook.pk]),
            {"question": "Why?", "conversation": "the last one"},
        )

        assert response.status_code == 400
        assert "conversation: Expected a number" in response.text
    assert not Message.objects.exists() and not Conversation.objects.exists()


def test_posting_a_note_with_a_switch_other_than_0_or_1_leaves_it_as_it_was(
    client, owner, notebook
):
    client.force_login(owner)
    note = Note.objects.create(user=owner, notebook=notebook, content="Otters.", posted=False)
    url = reverse("notebooks:post_note", args=[notebook.pk, note.pk])

    refused = client.post(url, {"posted": "yes"})
    missing = client.post(url, {})

    assert refused.status_code == missing.status_code == 400
    assert "posted: Select a valid choice" in refused.text
    assert "posted: This field is required" in missing.text
    note.refresh_from_db()
    assert note.posted is False
    client.post(url, {"posted": "1"})
    note.refresh_from_db()
    assert note.posted is True


def test_ticking_a_source_by_name_is_refused_and_the_choice_kept(client, owner, notebook):
    client.force_login(owner)
    source = make_source(owner=owner, notebook=notebook, title="Otter facts")
    url = reverse("notebooks:choose_sources", args=[notebook.pk])

    response = client.post(url, {"ticked": [str(source.pk), "otters"]})

    assert response.status_code == 400
    assert "ticked: Expected a number" in response.text
    assert not source_choice(user=owner, notebook=notebook).unticked


def test_the_notebook_page_about_a_source_by_words_is_refused(client, owner, notebook):
    client.force_login(owner)
    response = client.get(reverse("notebooks:detail", args=[notebook.pk]), {"about": "x"})

    assert response.status_code == 400
    assert "about: Expected a number" in response.text
