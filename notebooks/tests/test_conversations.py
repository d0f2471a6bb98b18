"""Several conversations per notebook: listed, opened, renamed, deleted, continued."""

import re

from django.urls import reverse

from notebooks.models import Conversation, Message
from notebooks.tests.factories import make_cited_answer, make_source


def _conversation(notebook, question):
    conversation = Conversation.objects.create(notebook=notebook, user=notebook.owner)
    Message.objects.create(conversation=conversation, role=Message.Role.USER, content=question)
    Message.objects.create(
        conversation=conversation,
        role=Message.Role.ASSISTANT,
        content=f"An answer to {question}",
        mode=Message.Mode.REFUSAL,
    )
    return conversation


def _conversation_field(response):
    """The conversation the question form posts into ("" starts a new one)."""
    return re.search(r'name="conversation"\s+value="(\d*)"', response.text).group(1)


def test_the_notebook_page_lists_conversations_titled_by_their_first_question(
    client, owner, notebook
):
    _conversation(notebook, "What do otters eat?")
    _conversation(notebook, "Why do otters hold hands while they sleep in the kelp forests? " * 3)
    client.force_login(owner)

    response = client.get(reverse("notebooks:detail", args=[notebook.pk]))

    assert "What do otters eat?" in response.text
    assert "Why do otters hold hands while they sleep in the kelp…" in response.text
    assert "New conversation" in response.text


def test_opening_a_conversation_shows_its_messages_with_citations(client, owner, notebook):
    cited = make_cited_answer(notebook=notebook, source=make_source(owner=owner, notebook=notebook))
    conversation = cited.message.conversation
    _conversation(notebook, "A later, other question?")  # the latest: shown by default
    client.force_login(owner)

    response = client.get(reverse("notebooks:conversation", args=[notebook.pk, conversation.pk]))

    assert response.status_code == 200
    assert "Otters hold hands" in response.text
    assert reverse("notebooks:citation", args=[notebook.pk, cited.pk]) in response.text
    assert "Field notes, page 4" in response.text
    assert "An answer to A later, other question?" not in response.text
    assert _conversation_field(response) == str(conversation.pk)


def test_a_new_conversation_starts_empty(client, owner, notebook):
    _conversation(notebook, "What do otters eat?")
    client.force_login(owner)

    response = client.get(reverse("notebooks:new_conversation", args=[notebook.pk]))

    assert "An answer to What do otters eat?" not in response.text
    assert _conversation_field(response) == ""


def test_a_question_goes_into_the_open_conversation_and_names_it_in_the_url(
    client, owner, notebook
):
    older = _conversation(notebook, "First?")
    _conversation(notebook, "Newer?")
    client.force_login(owner)

    response = client.post(
        reverse("notebooks:ask", args=[notebook.pk]),
        {"question": "Second?", "conversation": older.pk},
        headers={"HX-Request": "true"},
    )

    assert list(older.messages.values_list("content", flat=True))[2] == "Second?"
    url = reverse("notebooks:conversation", args=[notebook.pk, older.pk])
    assert response["HX-Push-Url"] == url
    assert 'id="conversations"' in response.text  # the list is refreshed out of band


def test_renaming_a_conversation_sets_its_title(client, owner, notebook):
    conversation = _conversation(notebook, "What do otters eat?")
    client.force_login(owner)

    response = client.post(
        reverse("notebooks:rename_conversation", args=[notebook.pk, conversation.pk]),
        {"title": "  Otter   diet "},
    )

    assert response.status_code == 302
    conversation.refresh_from_db()
    assert conversation.title == "Otter diet"
    page = client.get(reverse("notebooks:conversation", args=[notebook.pk, conversation.pk]))
    assert ">Otter diet</a>" in page.text


def test_renaming_to_nothing_brings_back_the_first_question(client, owner, notebook):
    conversation = _conversation(notebook, "What do otters eat?")
    Conversation.objects.filter(pk=conversation.pk).update(title="Diet")
    client.force_login(owner)

    client.post(
        reverse("notebooks:rename_conversation", args=[notebook.pk, conversation.pk]),
        {"title": " "},
    )

    conversation.refresh_from_db()
    assert conversation.display_title == "What do otters eat?"


def test_deleting_a_conversation_removes_it_and_its_messages(client, owner, notebook):
    conversation = _conversation(notebook, "What do otters eat?")
    kept = _conversation(notebook, "Kept?")
    client.force_login(owner)

    response = client.post(
        reverse("notebooks:delete_conversation", args=[notebook.pk, conversation.pk]),
        headers={"HX-Request": "true"},
    )

    assert response.status_code == 200
    assert response["HX-Redirect"] == reverse("notebooks:detail", args=[notebook.pk])
    assert list(Conversation.objects.all()) == [kept]
    assert not Message.objects.filter(conversation_id=conversation.pk).exists()


def test_delete_asks_for_confirmation(client, owner, notebook):
    conversation = _conversation(notebook, "What do otters eat?")
    client.force_login(owner)

    response = client.get(reverse("notebooks:conversation", args=[notebook.pk, conversation.pk]))

    assert 'hx-confirm="Delete this conversation and all its messages?"' in response.text


def test_deleting_and_renaming_need_a_post(client, owner, notebook):
    conversation = _conversation(notebook, "What do otters eat?")
    client.force_login(owner)

    for name in ("notebooks:rename_conversation", "notebooks:delete_conversation"):
        response = client.get(reverse(name, args=[notebook.pk, conversation.pk]))
        assert response.status_code == 405
    assert Conversation.objects.filter(pk=conversation.pk).exists()
