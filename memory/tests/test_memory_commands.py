"""The chat's memory commands: answered by Loupe without a model call, stored in the
conversation as a command's reply, and kept out of the turns a later answer is given."""

from __future__ import annotations

import pytest
from django.utils import translation

from generation.answering import answer_question, stream_answer
from memory.models import MAX_FACTS, Memory
from memory.services import MemoryRefused
from notebooks.models import Message

HERONS = b"Grey herons wait motionless at the edge of the pond until a fish swims past."


def ask(owner, notebook, text, conversation=None):
    return answer_question(user=owner, notebook=notebook, question=text, conversation=conversation)


def test_remember_stores_a_fact_for_the_notebook_without_a_model_call(fake_openai, owner, notebook):
    answer = ask(owner, notebook, "/remember I teach year 9 biology.")

    assert answer.message.mode == Message.Mode.COMMAND
    assert "Remembered for this notebook: “I teach year 9 biology.”" in answer.message.content
    assert fake_openai.chat_requests == [] and fake_openai.requests == []
    fact = Memory.objects.get()
    assert (fact.user, fact.notebook, fact.text) == (owner, notebook, "I teach year 9 biology.")


def test_a_command_needs_no_source_and_no_ticked_source(owner, notebook):
    # The notebook is empty: a question would get the "no sources yet" refusal.
    answer = ask(owner, notebook, "/memory")

    assert answer.message.mode == Message.Mode.COMMAND
    assert "Nothing is remembered here yet" in answer.message.content


def test_memory_lists_the_facts_with_their_numbers_and_where_they_apply(owner, notebook):
    ask(owner, notebook, "/remember I teach year 9 biology.")
    Memory.objects.create(user=owner, notebook=None, text="Answer in short sentences.")

    listing = ask(owner, notebook, "/memory").message.content

    assert "1. I teach year 9 biology. (this notebook)" in listing
    assert "2. Answer in short sentences. (all your notebooks)" in listing


def test_the_same_fact_twice_is_kept_once(owner, notebook):
    ask(owner, notebook, "/remember I teach year 9 biology.")
    again = ask(owner, notebook, "/remember  i teach YEAR 9 biology. ")

    assert "Already remembered" in again.message.content
    assert Memory.objects.count() == 1


def test_forget_by_number_and_by_words(owner, notebook):
    for fact in ("I teach year 9 biology.", "My class reads slowly.", "Use metric units."):
        ask(owner, notebook, f"/remember {fact}")

    second = ask(owner, notebook, "/forget 2").message.content
    assert second == "Forgotten: “My class reads slowly.”."
    by_words = ask(owner, notebook, "/forget metric").message.content
    assert by_words == "Forgotten: “Use metric units.”."
    assert list(Memory.objects.values_list("text", flat=True)) == ["I teach year 9 biology."]


@pytest.mark.parametrize(
    ("command", "says"),
    [
        ("/remember", "Write the fact to remember"),
        ("/remember    ", "Write the fact to remember"),
        ("/forget", "Name the fact to forget"),
        ("/forget 7", "There is no remembered fact 7 here: 2 apply"),
        ("/forget 0", "There is no remembered fact 0 here"),
        ("/forget penguins", "No remembered fact here holds “penguins”"),
        ("/forget year", r"2 remembered facts hold “year” \(1, 2\)\. Forget one by its number"),
        ("/memory everything", "is not a command"),
    ],
)
def test_bad_commands_are_refused_saying_what_to_write(owner, notebook, command, says):
    ask(owner, notebook, "/remember I teach year 9 biology.")
    ask(owner, notebook, "/remember The exam is next year.")

    with pytest.raises(MemoryRefused, match=says):
        ask(owner, notebook, command)

    assert Memory.objects.count() == 2
    # Nothing stored for the refused command: its text goes back into the question box.
    assert not Message.objects.filter(content=command).exists()


def test_a_fact_too_long_is_refused_with_its_length(owner, notebook):
    with pytest.raises(MemoryRefused, match="at most 500 characters; this one has 501"):
        ask(owner, notebook, "/remember " + "x" * 501)


def test_the_hundred_and_first_fact_is_refused_with_what_to_do(owner, notebook, outsider):
    Memory.objects.bulk_create(
        Memory(user=owner, notebook=notebook, text=f"fact {n}") for n in range(MAX_FACTS)
    )

    with pytest.raises(MemoryRefused, match="You have 100 remembered facts, the most Loupe keeps"):
        ask(owner, notebook, "/remember one more")

    assert Memory.objects.filter(user=owner).count() == MAX_FACTS


def remembered_in_three_places(owner, notebook):
    from notebooks.models import Notebook

    other = Notebook.objects.create(owner=owner, title="Elsewhere")
    Memory.objects.create(user=owner, notebook=other, text="Only for the other notebook.")
    Memory.objects.create(user=owner, notebook=None, text="Everywhere.")
    ask(owner, notebook, "/remember Here.")


def test_memory_clear_forgets_this_notebooks_facts_and_keeps_those_for_all(owner, notebook):
    remembered_in_three_places(owner, notebook)

    reply = ask(owner, notebook, "/memory clear").message.content

    assert reply == (
        "Forgot the 1 fact remembered for this notebook. The 1 fact for all your notebooks "
        "stays; /memory clear all forgets it too."
    )
    assert sorted(Memory.objects.values_list("text", flat=True)) == [
        "Everywhere.",
        "Only for the other notebook.",
    ]


def test_memory_clear_all_also_forgets_the_facts_for_all_notebooks(owner, notebook):
    remembered_in_three_places(owner, notebook)

    reply = ask(owner, notebook, "/memory clear all").message.content

    assert reply == "Forgot all 2 remembered facts that applied here."
    assert list(Memory.objects.values_list("text", flat=True)) == ["Only for the other notebook."]


def test_the_german_commands_clear_this_notebooks_facts_or_all(owner, notebook):
    remembered_in_three_places(owner, notebook)

    with translation.override("de"):
        here = ask(owner, notebook, "/erinnerungen löschen").message.content
        assert list(Memory.objects.filter(notebook=notebook)) == []
        assert Memory.objects.filter(notebook=None).exists()
        everywhere = ask(owner, notebook, "/erinnerungen löschen alle").message.content

    assert here.startswith("1 Erinnerung für dieses Notizbuch vergessen.")
    assert "/memory clear all" in here or "/erinnerungen löschen alle" in here
    assert not Memory.objects.filter(notebook=None).exists()
    assert everywhere and everywhere != here


def test_memory_clear_with_other_words_is_refused(owner, notebook):
    remembered_in_three_places(owner, notebook)

    with pytest.raises(MemoryRefused, match="is not a command"):
        ask(owner, notebook, "/memory clear everything now")

    assert Memory.objects.count() == 3


def test_help_lists_the_commands(owner, notebook):
    reply = ask(owner, notebook, "/help").message.content

    for command in ("/remember", "/forget", "/memory", "/memory clear", "/help"):
        assert command in reply


def test_a_path_is_a_question_not_a_command(owner, notebook, add_ready_source):
    add_ready_source(notebook, HERONS, "herons.txt")

    answer = ask(owner, notebook, "/etc/hosts holds what?")

    assert answer.message.mode != Message.Mode.COMMAND
    assert not Memory.objects.exists()


def test_german_commands_answer_in_german(owner, notebook):
    with translation.override("de"):
        reply = ask(owner, notebook, "/merken Ich unterrichte Biologie.").message.content
        listing = ask(owner, notebook, "/erinnerungen").message.content
        with pytest.raises(MemoryRefused, match="Schreiben Sie die Tatsache"):
            ask(owner, notebook, "/merken")

    assert reply.startswith("Für dieses Notizbuch gemerkt")
    assert "1. Ich unterrichte Biologie. (dieses Notizbuch)" in listing


def test_commands_and_their_replies_are_not_turns_of_a_later_answer(
    fake_openai, owner, notebook, add_ready_source
):
    add_ready_source(notebook, HERONS, "herons.txt")
    first = ask(owner, notebook, "/remember I draw birds.")
    fake_openai.chat_replies.append("Herons wait at the pond's edge [1].")

    ask(owner, notebook, "Where do herons wait?", conversation=first.conversation)

    sent = fake_openai.chat_requests[-1].body["messages"]
    assert [message["role"] for message in sent] == ["system", "user"]
    assert "/remember" not in sent[-1]["content"]


def test_a_streamed_command_yields_its_reply_and_the_stored_message(owner, notebook):
    items = list(stream_answer(user=owner, notebook=notebook, question="/remember Be brief."))

    assert items[0].startswith("Remembered for this notebook")
    assert items[-1].message.mode == Message.Mode.COMMAND
