"""The OpenAI-compatible endpoint, driven by the official `openai` client against Loupe
served by uvicorn: models are notebooks, answers keep their [n], citations ride along."""

from __future__ import annotations

import openai
import pytest

from api.tokens import create_token
from billing.models import Usage
from notebooks.models import Message

REPLY = "Grey herons wait motionless at the edge of the pond [1]."


@pytest.fixture
def client_for(live):
    url, _models = live

    def make(user, scope: str = "write") -> openai.OpenAI:
        secret = create_token(user=user, name="openai", scope=scope).secret
        return openai.OpenAI(base_url=f"{url}/v1", api_key=secret, max_retries=0)

    return make


def test_the_models_are_the_notebooks_one_may_ask(client_for, owner, notebook, outsider):
    listed = [model.id for model in client_for(owner).models.list()]
    assert listed == [f"notebook-{notebook.pk}"]
    assert list(client_for(outsider).models.list()) == []


def test_an_answer_keeps_its_markers_and_carries_its_citations(
    client_for, owner, notebook, live, live_library
):
    _url, models = live
    models.chat_replies.append(REPLY)

    completion = client_for(owner).chat.completions.create(
        model=f"notebook-{notebook.pk}",
        messages=[{"role": "user", "content": "Where do herons wait?"}],
    )

    assert completion.choices[0].message.content == REPLY
    citations = completion.model_extra["citations"]
    assert citations[0]["n"] == 1 and citations[0]["source_id"] == live_library[0].pk
    assert citations[0]["supported"] is True
    assert completion.usage.completion_tokens > 0
    message = Message.objects.get(pk=completion.model_extra["loupe"]["message"])
    assert Usage.objects.filter(message=message, user=owner).exists()


def test_a_streamed_answer_ends_with_its_citations(client_for, owner, notebook, live, live_library):
    _url, models = live
    models.chat_replies.append(REPLY)

    stream = client_for(owner).chat.completions.create(
        model=f"notebook-{notebook.pk}",
        messages=[{"role": "user", "content": "Where do herons wait?"}],
        stream=True,
    )
    chunks = list(stream)

    text = "".join(chunk.choices[0].delta.content or "" for chunk in chunks)
    assert text == REPLY
    last = chunks[-1]
    assert last.choices[0].finish_reason == "stop"
    assert last.model_extra["citations"][0]["quote"]
    assert last.model_extra["loupe"]["content"] == REPLY


def test_other_peoples_notebooks_a_read_token_and_no_credit_are_refused(
    client_for, owner, outsider, notebook, live_library
):
    asked = {"messages": [{"role": "user", "content": "Where do herons wait?"}]}
    with pytest.raises(openai.NotFoundError):
        client_for(outsider).chat.completions.create(model=f"notebook-{notebook.pk}", **asked)
    with pytest.raises(openai.PermissionDeniedError):
        client_for(owner, "read").chat.completions.create(model=f"notebook-{notebook.pk}", **asked)
    with pytest.raises(openai.NotFoundError):
        client_for(owner).chat.completions.create(model="gpt-4o", **asked)

    from billing.services import balance, grant_credit

    grant_credit(user=owner, amount=-balance(owner), reason="spent in a test")
    with pytest.raises(openai.APIStatusError) as refused:
        client_for(owner).chat.completions.create(model=f"notebook-{notebook.pk}", **asked)
    assert refused.value.status_code == 402
    assert not Message.objects.exists()


@pytest.mark.parametrize("stream", [False, True])
def test_the_clients_earlier_messages_are_the_conversation_a_follow_up_is_read_with(
    client_for, owner, notebook, live, live_library, stream
):
    _url, models = live
    models.requests.clear()
    models.chat_replies.append("For hours at a time [1].")
    earlier = [
        {"role": "system", "content": "You are a pirate."},
        {"role": "user", "content": "Where do herons wait?"},
        {"role": "assistant", "content": REPLY},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "a tool's output"},
    ]

    created = client_for(owner).chat.completions.create(
        model=f"notebook-{notebook.pk}",
        messages=[*earlier, {"role": "user", "content": "How long do herons wait there?"}],
        stream=stream,
    )
    if stream:
        list(created)

    [request] = models.chat_requests
    sent = request.body["messages"]
    # Loupe's own system prompt, the client's turns (its system message left out), then
    # the question with the passages.
    assert sent[0]["role"] == "system" and "pirate" not in sent[0]["content"]
    assert [(m["role"], m["content"]) for m in sent[1:3]] == [
        ("user", "Where do herons wait?"),
        ("assistant", REPLY),
    ]
    assert "How long do herons wait there?" in sent[-1]["content"]
    # Stored as a conversation of its own: the question and the answer.
    asked = Message.objects.get(role="user")
    assert asked.content == "How long do herons wait there?"


def test_a_last_message_that_is_not_the_users_is_refused_naming_messages(
    client_for, owner, notebook, live_library
):
    with pytest.raises(openai.BadRequestError) as refused:
        client_for(owner).chat.completions.create(
            model=f"notebook-{notebook.pk}",
            messages=[
                {"role": "user", "content": "Where do herons wait?"},
                {"role": "assistant", "content": REPLY},
            ],
        )
    assert refused.value.body["param"] == "messages"
    assert "last message" in refused.value.body["message"]
    assert not Message.objects.exists()
