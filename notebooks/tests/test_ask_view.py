from django.urls import reverse

from generation.prompts import EMPTY_NOTEBOOK_REPLY
from notebooks.models import Conversation, Message
from providers.errors import ProviderError


def _ask(client, notebook, **data):
    url = reverse("notebooks:ask", args=[notebook.pk])
    return client.post(url, data, headers={"HX-Request": "true"})


def test_empty_question_shows_an_error_in_the_chat(client, owner, notebook):
    client.force_login(owner)

    response = _ask(client, notebook, question="   ")

    assert response.status_code == 200
    assert "The question is empty." in response.text
    assert not Message.objects.exists()


def test_notebook_without_sources_gets_the_refusal(client, owner, notebook):
    client.force_login(owner)

    response = _ask(client, notebook, question="What do otters do?")

    assert response.status_code == 200
    assert "What do otters do?" in response.text
    assert EMPTY_NOTEBOOK_REPLY in response.text
    conversation = Conversation.objects.get(notebook=notebook)
    # The new conversation's id goes back into the question form for the next turn.
    assert f'value="{conversation.pk}" hx-swap-oob="true"' in response.text


def test_follow_up_question_continues_the_conversation(client, owner, notebook):
    client.force_login(owner)
    _ask(client, notebook, question="First?")
    conversation = Conversation.objects.get(notebook=notebook)

    _ask(client, notebook, question="Second?", conversation=conversation.pk)

    assert Conversation.objects.count() == 1
    assert conversation.messages.count() == 4


def test_asking_without_htmx_redirects_to_the_notebook(client, owner, notebook):
    client.force_login(owner)

    response = client.post(reverse("notebooks:ask", args=[notebook.pk]), {"question": "Hi?"})

    assert response.status_code == 302
    detail = client.get(response.url)
    assert EMPTY_NOTEBOOK_REPLY in detail.text


def test_model_failure_shows_in_the_chat_instead_of_a_server_error(
    client, owner, notebook, monkeypatch
):
    def failing(**kwargs):
        raise ProviderError("The chat model did not answer (HTTP 500); check OPENAI_BASE_URL.")

    monkeypatch.setattr("notebooks.views.chat.answer_question", failing)
    client.force_login(owner)

    response = _ask(client, notebook, question="What do otters do?")

    assert response.status_code == 200
    assert "What do otters do?" in response.text
    assert "The chat model did not answer (HTTP 500)" in response.text
