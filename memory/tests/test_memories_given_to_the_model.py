"""Remembered facts go to the model as the asker's own words, in the system prompt after
the style; no citation can point at one; the answer keeps the facts it was given and shows
them in its "used" line."""

from __future__ import annotations

from django.urls import reverse

from generation import prompts
from generation.answering import answer_question
from memory.models import Memory
from memory.services import PROMPT_TOKENS, facts_to_give
from notebooks.models import Notebook

HERONS = b"Grey herons wait motionless at the edge of the pond until a fish swims past."


def test_the_facts_reach_the_system_prompt_and_are_kept_with_the_answer(
    fake_openai, owner, notebook, add_ready_source
):
    add_ready_source(notebook, HERONS, "herons.txt")
    Memory.objects.create(user=owner, notebook=notebook, text="I teach year 9 biology.")
    Memory.objects.create(user=owner, notebook=None, text="Answer in short sentences.")
    fake_openai.chat_replies.append("Herons wait at the pond's edge [1].")

    answer = answer_question(user=owner, notebook=notebook, question="Where do herons wait?")

    system = fake_openai.chat_requests[-1].body["messages"][0]["content"]
    assert system.startswith(prompts.SYSTEM_PROMPT)
    assert "their own words, not a source" in system
    assert "- I teach year 9 biology.\n- Answer in short sentences." in system
    # Only passages are numbered: a fact is no [n].
    user_prompt = fake_openai.chat_requests[-1].body["messages"][-1]["content"]
    assert "year 9" not in user_prompt
    assert answer.message.memories == ["I teach year 9 biology.", "Answer in short sentences."]
    assert [cited.source_title for cited in answer.citations] == ["herons"]


def test_a_marker_past_the_passages_cites_nothing_not_a_fact(
    fake_openai, owner, notebook, add_ready_source
):
    add_ready_source(notebook, HERONS, "herons.txt")
    Memory.objects.create(user=owner, notebook=notebook, text="I draw birds.")
    # One passage: a model counting the fact as passage [2] cites nothing there.
    fake_openai.chat_replies.append("Herons wait at the edge [1]. You draw birds [2].")

    answer = answer_question(user=owner, notebook=notebook, question="Where do herons wait?")

    assert [cited.n for cited in answer.citations] == [1]
    assert "[2]" not in answer.message.content


def test_other_people_and_other_notebooks_facts_are_not_given(
    fake_openai, owner, outsider, notebook, add_ready_source
):
    add_ready_source(notebook, HERONS, "herons.txt")
    other = Notebook.objects.create(owner=owner, title="Trains")
    Memory.objects.create(user=owner, notebook=other, text="Only about trains.")
    Memory.objects.create(user=outsider, notebook=None, text="The outsider's fact.")
    fake_openai.chat_replies.append("Herons wait at the edge [1].")

    answer = answer_question(user=owner, notebook=notebook, question="Where do herons wait?")

    system = fake_openai.chat_requests[-1].body["messages"][0]["content"]
    assert "trains" not in system and "outsider" not in system
    assert system == prompts.SYSTEM_PROMPT
    assert answer.message.memories == []


def test_the_newest_facts_that_fit_are_given(owner, notebook):
    Memory.objects.bulk_create(
        Memory(user=owner, notebook=notebook, text=f"Fact number {n}: " + "word " * 40)
        for n in range(60)
    )

    given = facts_to_give(user=owner, notebook=notebook)

    assert 0 < len(given) < 60
    assert given[-1].startswith("Fact number 59:")
    assert sum(len(fact) for fact in given) < PROMPT_TOKENS * 8


def test_offline_no_fact_is_given(settings, owner, notebook, add_ready_source, fake_openai):
    settings.CHAT_MODEL = ""  # extractive: no model to give it to
    add_ready_source(notebook, HERONS, "herons.txt")
    Memory.objects.create(user=owner, notebook=notebook, text="I draw birds.")

    answer = answer_question(user=owner, notebook=notebook, question="Where do herons wait?")

    assert answer.message.mode == "extractive"
    assert answer.message.memories == []


def test_the_answer_shows_the_facts_it_was_given(
    client, fake_openai, owner, notebook, add_ready_source
):
    add_ready_source(notebook, HERONS, "herons.txt")
    Memory.objects.create(user=owner, notebook=notebook, text="I draw birds.")
    fake_openai.chat_replies.append("Herons wait at the edge [1].")
    answer = answer_question(user=owner, notebook=notebook, question="Where do herons wait?")
    client.force_login(owner)

    page = client.get(reverse("notebooks:conversation", args=[notebook.pk, answer.conversation.pk]))

    html = page.content.decode()
    assert "With 1 remembered fact of yours" in html
    assert "<li>I draw birds.</li>" in html
