"""A notebook's chat style: its goal and custom instructions go into the answer's system
prompt after the citing rules, its length too; offline the length decides how many
sentences the extractive answer quotes."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from generation import chat_style, prompts
from generation.answering import answer_question
from notebooks.models import Notebook
from sharing.models import Membership
from texts.errors import UserFacingError

FACTS = " ".join(
    f"Herons fact {i}: the grey heron waits by pond {i} for fish at dawn." for i in range(8)
).encode()


def test_the_default_style_is_the_plain_citing_prompt(notebook):
    assert chat_style.system_prompt(notebook) == prompts.SYSTEM_PROMPT


def test_the_learning_guide_and_the_length_follow_the_citing_rules(notebook):
    notebook.chat_goal, notebook.chat_length = "learning", "shorter"

    prompt = chat_style.system_prompt(notebook)

    assert prompt.startswith(prompts.SYSTEM_PROMPT)
    assert "learning guide" in prompt and "question that checks" in prompt
    assert "keep the answer short" in prompt


def test_custom_instructions_reach_the_model(fake_openai, owner, notebook, add_ready_source):
    add_ready_source(notebook, FACTS, "herons.txt")
    chat_style.set_chat_style(
        notebook=notebook, goal="custom", length="longer", instructions="Answer as a pirate."
    )
    fake_openai.chat_replies.append("Arr, herons wait [1].")

    answer_question(user=owner, notebook=notebook, question="What do herons wait for?")

    system = fake_openai.chat_requests[-1].body["messages"][0]
    assert system["role"] == "system"
    assert system["content"].startswith(prompts.SYSTEM_PROMPT)
    assert "Answer as a pirate." in system["content"]
    assert "answer at length" in system["content"]


@pytest.mark.parametrize(("length", "most"), [("shorter", 1), ("default", 3), ("longer", 6)])
def test_offline_the_length_decides_how_many_sentences_are_quoted(
    settings, owner, notebook, add_ready_source, fake_openai, length, most
):
    settings.CHAT_MODEL = ""  # no chat model: extractive answers
    settings.CHUNK_TOKENS, settings.CHUNK_OVERLAP_TOKENS = 200, 10
    add_ready_source(notebook, FACTS, "herons.txt")
    notebook.chat_length = length
    notebook.save()

    answer = answer_question(
        user=owner, notebook=notebook, question="What does the heron wait for?"
    )

    assert answer.message.mode == "extractive"
    # Each quoted sentence ends with its marker.
    assert answer.message.content.count("[1]") == most


def test_instructions_longer_than_2000_characters_are_refused(notebook):
    with pytest.raises(UserFacingError, match="at most 2000 characters"):
        chat_style.set_chat_style(
            notebook=notebook, goal="custom", length="default", instructions="x" * 2001
        )
    with pytest.raises(UserFacingError, match="Write the custom instructions"):
        chat_style.set_chat_style(
            notebook=notebook, goal="custom", length="default", instructions=""
        )
    with pytest.raises(UserFacingError, match="Unknown chat goal"):
        chat_style.set_chat_style(notebook=notebook, goal="poet", length="default", instructions="")
    notebook.refresh_from_db()
    assert (notebook.chat_goal, notebook.chat_length) == ("default", "default")


def test_the_owner_sets_the_style_on_the_page_and_a_viewer_cannot(client, owner, notebook):
    url = reverse("notebooks:chat_style", args=[notebook.pk])
    client.force_login(owner)

    client.post(url, {"goal": "learning", "length": "longer", "instructions": ""})

    notebook.refresh_from_db()
    assert (notebook.chat_goal, notebook.chat_length) == ("learning", "longer")
    page = client.get(reverse("notebooks:detail", args=[notebook.pk])).text
    assert "Learning guide: explain, then ask back · Longer" in page

    viewer = get_user_model().objects.create_user(username="vi", password="vi-pass-123")
    Membership.objects.create(notebook=notebook, user=viewer, role="viewer")
    client.force_login(viewer)
    assert client.post(url, {"goal": "default", "length": "default"}).status_code == 403
    assert Notebook.objects.get(pk=notebook.pk).chat_goal == "learning"


def test_an_outsider_and_an_anonymous_visitor_cannot_set_the_style(client, outsider, notebook):
    url = reverse("notebooks:chat_style", args=[notebook.pk])
    data = {"goal": "custom", "length": "longer", "instructions": "Leak everything."}

    anonymous = client.post(url, data)
    client.force_login(outsider)
    outsiders = client.post(url, data)

    assert anonymous.status_code == 302 and "/login/" in anonymous.url
    assert outsiders.status_code == 404
    notebook.refresh_from_db()
    assert (notebook.chat_goal, notebook.chat_instructions) == ("default", "")
