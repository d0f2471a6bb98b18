import pytest
from asgiref.sync import async_to_sync
from django.urls import reverse

from billing.models import Usage
from billing.services import balance, grant_credit
from generation.answering import stream_answer
from generation.tests.passages import BREAD, HERONS, TRAINS
from notebooks.models import Message
from notebooks.tests.streaming import ask_stream, parse, read_all
from notebooks.views.chat import _answer_events

REPLY = "Grey herons wait motionless at the edge of the pond [1]."


@pytest.fixture
def library(fake_openai, notebook, add_ready_source):
    return [
        add_ready_source(notebook, HERONS, "herons.txt"),
        add_ready_source(notebook, TRAINS, "trains.txt"),
        add_ready_source(notebook, BREAD, "bread.txt"),
    ]


def test_the_first_words_arrive_before_the_model_has_sent_the_rest(
    client, owner, notebook, library, fake_openai
):
    fake_openai.chat_replies.append(REPLY)
    fake_openai.stream_delay = 0.1
    client.force_login(owner)

    response = ask_stream(client, notebook, question="Where do herons wait?")
    parts, sent_at_first = read_all(response, fake_openai)

    assert response.status_code == 200
    assert response["Content-Type"] == "text/event-stream"
    # Ten words, a finish chunk and a usage chunk; the first word came after the first.
    assert sent_at_first is not None and sent_at_first < 5
    events = parse(parts)
    # The passages first, each with its source, page and the sentence that matches.
    name, evidence = events[0]
    assert name == "evidence"
    assert {"n", "source", "page", "sentence"} <= set(evidence["passages"][0])
    assert events[1] == ("delta", {"text": "Grey"})
    assert "".join(data["text"] for name, data in events if name == "delta") == REPLY


def test_the_last_event_names_the_stored_message_with_its_citations(
    client, owner, notebook, library, fake_openai
):
    fake_openai.chat_replies.append(REPLY)
    client.force_login(owner)

    parts, _ = read_all(ask_stream(client, notebook, question="Where do herons wait?"))

    name, done = parse(parts)[-1]
    assert name == "done"
    message = Message.objects.get(pk=done["message"], role=Message.Role.ASSISTANT)
    assert message.conversation_id == done["conversation"]
    assert message.content == REPLY
    (cited,) = message.citations.all()
    assert cited.supported is True and cited.quote in cited.chunk.text
    rendered = client.get(done["message_url"], headers={"HX-Request": "true"})
    citation_url = reverse("notebooks:citation", args=[notebook.pk, cited.pk])
    assert f'href="{citation_url}"' in rendered.text
    # The new conversation goes into the form and the list.
    assert f'value="{message.conversation_id}" hx-swap-oob="true"' in rendered.text
    assert done["conversation_url"] == reverse(
        "notebooks:conversation", args=[notebook.pk, message.conversation_id]
    )


def test_one_usage_row_per_streamed_answer(client, owner, notebook, library, fake_openai):
    fake_openai.chat_replies += [REPLY, REPLY]
    client.force_login(owner)

    for _ in range(2):
        read_all(ask_stream(client, notebook, question="Where do herons wait?"))

    chats = Usage.objects.filter(kind="chat")
    assert chats.count() == 2
    assert all(row.input_tokens and row.output_tokens == 11 for row in chats)
    assert {row.message_id for row in chats} == set(
        Message.objects.filter(role=Message.Role.ASSISTANT).values_list("pk", flat=True)
    )


def test_a_refusal_streams_whole_and_is_stored(client, owner, notebook, fake_openai):
    client.force_login(owner)

    parts, _ = read_all(ask_stream(client, notebook, question="Where do herons wait?"))

    (delta, done) = parse(parts)
    assert delta[0] == "delta" and done[0] == "done"
    assert Message.objects.get(pk=done[1]["message"]).mode == Message.Mode.REFUSAL


def test_a_model_failure_is_an_error_event_and_stores_nothing(
    client, owner, notebook, library, fake_openai
):
    fake_openai.fail_next("500", times=2, endpoint="chat/completions")
    client.force_login(owner)

    parts, _ = read_all(ask_stream(client, notebook, question="Where do herons wait?"))

    ((name, data),) = parse(parts)
    assert name == "error" and "HTTP 500" in data["error"]
    assert not Message.objects.exists()
    # The question's embedding was billed all the same (written after the chat request).
    embedding = Usage.objects.get(kind="embedding", source=None)
    assert embedding.user == owner and embedding.notebook_id == notebook.pk


def test_a_client_that_hangs_up_mid_answer_leaves_nothing_stored(
    owner, notebook, library, fake_openai
):
    fake_openai.chat_replies.append(REPLY)
    fake_openai.stream_delay = 0.05
    answers = stream_answer(user=owner, notebook=notebook, question="Where do herons wait?")
    # The view's events, closed as when the client disconnects: Django's ASGI handler
    # cancels the response, and the cancellation or the event loop's finaliser closes them
    # (the test client would leave them to the garbage collector, after the test).
    events = _answer_events(notebook, answers)

    async def read_two_and_hang_up():
        await anext(events)  # the passages
        first = await anext(events)
        await events.aclose()
        return first

    first = async_to_sync(read_two_and_hang_up)()

    assert parse([first.encode()]) == [("delta", {"text": "Grey"})]
    assert answers.gi_frame is None  # the answer's generator is closed too
    assert not Message.objects.exists()
    chat = Usage.objects.get(kind="chat")
    assert chat.notebook_id == notebook.pk and chat.output_tokens > 0


def test_a_spent_credit_is_refused_with_402(client, owner, notebook, fake_openai):
    grant_credit(user=owner, amount=-balance(owner), reason="spent in a test")
    client.force_login(owner)

    response = ask_stream(client, notebook, question="Where do herons wait?")

    assert response.status_code == 402
    assert not Message.objects.exists()
    assert fake_openai.requests == []


def test_an_empty_question_is_an_error_event(client, owner, notebook):
    client.force_login(owner)

    parts, _ = read_all(ask_stream(client, notebook, question="  "))

    assert parse(parts) == [("error", {"error": "The question is empty."})]


def test_the_ask_form_streams_with_javascript_and_posts_without(client, owner, notebook):
    client.force_login(owner)

    page = client.get(reverse("notebooks:detail", args=[notebook.pk])).text

    stream_url = reverse("notebooks:ask_stream", args=[notebook.pk])
    assert f'action="{reverse("notebooks:ask", args=[notebook.pk])}"' in page
    assert f'data-stream-url="{stream_url}"' in page
    assert "app.js" in page
