"""Asking through the API: the JSON answer and the streamed one (evidence, text, citations),
billed and limited as a question on the page."""

from __future__ import annotations

from billing.models import Usage
from notebooks.models import Message
from notebooks.tests.streaming import parse, read_all

REPLY = "Grey herons wait motionless at the edge of the pond [1]."


def _ask(notebook) -> str:
    return f"/api/v1/notebooks/{notebook.pk}/ask"


def test_an_answer_comes_with_its_citations_and_passages(api, notebook, library, fake_openai):
    fake_openai.chat_replies.append(REPLY)

    response = api.post(_ask(notebook), {"question": "Where do herons wait?"})

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["answer"]["content"] == REPLY
    (cited,) = body["answer"]["citations"]
    assert cited["n"] == 1 and cited["source_id"] == library[0].pk
    assert cited["supported"] is True and cited["quote"]
    assert {"page", "page_label", "section", "similarity"} <= set(cited)
    assert body["passages"][0]["source_title"]
    assert Usage.objects.filter(message_id=body["answer"]["id"]).exists()

    follow = api.post(
        _ask(notebook), {"question": "And how?", "conversation": body["conversation"]}
    )
    assert follow.json()["conversation"] == body["conversation"]


def test_an_answer_names_its_sentences_no_passage_supports(api, notebook, library, fake_openai):
    # A small model may leave a sentence uncited, or write one its passages do not hold: a
    # program reads which, as the page marks them [?].
    invented = "Herons migrate to Africa in winter."
    fake_openai.chat_replies.append(f"{REPLY} {invented}")

    body = api.post(_ask(notebook), {"question": "Where do herons wait?"}).json()

    assert body["answer"]["unsupported"] == [invented]
    assert body["question"]["unsupported"] == []

    fake_openai.chat_replies.append(REPLY)
    cited = api.post(_ask(notebook), {"question": "Where do herons wait?"}).json()
    assert cited["answer"]["unsupported"] == []


def test_the_stream_sends_evidence_then_text_then_citations(api, notebook, library, fake_openai):
    fake_openai.chat_replies.append(REPLY)

    response = api.post(_ask(notebook) + "/stream", {"question": "Where do herons wait?"})
    parts, _ = read_all(response)

    assert response["Content-Type"] == "text/event-stream"
    events = parse(parts)
    names = [name for name, _ in events]
    assert names[0] == "evidence" and names[-1] == "citations"
    assert set(names[1:-1]) == {"delta"}
    assert events[0][1]["passages"][0]["text"]
    assert "".join(data["text"] for name, data in events if name == "delta") == REPLY
    stored = events[-1][1]["message"]
    assert Message.objects.get(pk=stored["id"]).content == REPLY
    assert stored["citations"][0]["supported"] is True


def test_no_credit_is_402_and_nothing_is_asked(api, owner, notebook, library, spend_all_credit):
    spend_all_credit(owner)

    response = api.post(_ask(notebook), {"question": "Where do herons wait?"})

    assert response.status_code == 402
    assert response.json()["code"] == "credit_spent"
    assert not Message.objects.exists()


def test_questions_share_the_pages_rate(api, notebook, library, fake_openai, settings):
    from limits.rates import Rate

    settings.RATE_LIMIT_ASK = Rate(1, 60)
    fake_openai.chat_replies.extend([REPLY, REPLY])
    assert api.post(_ask(notebook), {"question": "Where do herons wait?"}).status_code == 200

    response = api.post(_ask(notebook), {"question": "Where do herons wait?"})
    assert response.status_code == 429 and response.json()["code"] == "rate_limited"


def test_bad_input_names_the_field(api, notebook):
    empty = api.post(_ask(notebook), {"question": ""})
    assert empty.status_code == 422
    assert empty.json()["field"] == "body.question"

    wrong = api.post(_ask(notebook), {"question": "Why?", "conversation": "x"})
    assert wrong.status_code == 422 and wrong.json()["field"] == "body.conversation"

    broken = api.post(_ask(notebook), "{not json", content_type="application/json")
    assert broken.status_code in (400, 422) and broken.json()["code"]


def test_someone_elses_conversation_is_404(api, notebook, library, outsider):
    from notebooks.models import Conversation, Notebook

    theirs = Notebook.objects.create(owner=outsider, title="Theirs")
    conversation = Conversation.objects.create(notebook=theirs, user=outsider)

    response = api.post(_ask(notebook), {"question": "Why?", "conversation": conversation.pk})

    assert response.status_code == 404 and response.json()["code"] == "not_found"
