"""Remembered facts through /api/v1/: listed numbered as /memory lists them, added, changed,
forgotten; a command asked through the API is answered as in the chat; an answer says
which facts it was given."""

from __future__ import annotations

import pytest

from api.tests.conftest import TokenClient
from api.tokens import create_token
from memory.models import MAX_FACTS, Memory


@pytest.fixture
def api(client, owner):
    return TokenClient(client, create_token(user=owner, name="script", scope="write").secret)


def test_add_list_change_and_forget(api, notebook):
    base = f"/api/v1/notebooks/{notebook.pk}/memories"

    made = api.post(base, {"text": "I teach year 9 biology."})
    again = api.post(base, {"text": "i teach year 9 biology."})
    everywhere = api.post(base, {"text": "Be brief.", "everywhere": True})

    assert made.status_code == 201 and again.status_code == 200
    assert again.json()["id"] == made.json()["id"]
    assert api.get(base).json() == [
        {
            "id": made.json()["id"],
            "number": 1,
            "text": "I teach year 9 biology.",
            "everywhere": False,
        },
        {"id": everywhere.json()["id"], "number": 2, "text": "Be brief.", "everywhere": True},
    ]
    changed = api.patch(
        f"{base}/{made.json()['id']}", {"text": "I teach year 10.", "everywhere": True}
    )
    assert changed.json()["text"] == "I teach year 10." and changed.json()["everywhere"] is True
    assert api.delete(f"{base}/{made.json()['id']}").status_code == 204
    assert list(Memory.objects.values_list("text", flat=True)) == ["Be brief."]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("  ", "body.text: is empty or only spaces; write it in words"),
        ("x" * 501, "body.text: String should have at most 500 characters"),
    ],
)
def test_bad_facts_are_422_saying_why(api, notebook, text, says):
    # Refused by the schema, which says so to every client: the service never sees them.
    response = api.post(f"/api/v1/notebooks/{notebook.pk}/memories", {"text": text})

    assert response.status_code == 422
    assert response.json()["code"] == "invalid_input" and response.json()["field"] == "body.text"
    assert response.json()["message"] == says
    assert not Memory.objects.exists()


def test_past_the_cap_is_422(api, owner, notebook):
    Memory.objects.bulk_create(Memory(user=owner, text=f"fact {n}") for n in range(MAX_FACTS))

    response = api.post(f"/api/v1/notebooks/{notebook.pk}/memories", {"text": "one more"})

    assert response.status_code == 422 and "the most Loupe keeps" in response.json()["message"]


def test_another_persons_fact_is_404(api, outsider, notebook):
    theirs = Memory.objects.create(user=outsider, notebook=None, text="Theirs.")
    base = f"/api/v1/notebooks/{notebook.pk}/memories"

    assert api.patch(f"{base}/{theirs.pk}", {"text": "Mine now."}).status_code == 404
    assert api.delete(f"{base}/{theirs.pk}").status_code == 404
    assert Memory.objects.get().text == "Theirs."


def test_a_command_asked_through_the_api_is_answered_as_in_the_chat(api, notebook, fake_openai):
    response = api.post(f"/api/v1/notebooks/{notebook.pk}/ask", {"question": "/remember Be brief."})

    assert response.status_code == 200
    answer = response.json()["answer"]
    assert answer["mode"] == "command" and answer["citations"] == []
    assert "Remembered for this notebook" in answer["content"]
    assert fake_openai.chat_requests == []
    refused = api.post(f"/api/v1/notebooks/{notebook.pk}/ask", {"question": "/forget"})
    assert refused.status_code == 400 and "Name the fact to forget" in refused.json()["message"]


def test_an_answer_lists_the_facts_it_was_given(
    api, owner, notebook, add_ready_source, fake_openai
):
    add_ready_source(notebook, b"Grey herons wait at the edge of the pond.", "herons.txt")
    Memory.objects.create(user=owner, notebook=notebook, text="I draw birds.")
    fake_openai.chat_replies.append("Herons wait at the edge of the pond [1].")

    response = api.post(
        f"/api/v1/notebooks/{notebook.pk}/ask", {"question": "Where do herons wait?"}
    )

    assert response.json()["answer"]["memories"] == ["I draw birds."]
