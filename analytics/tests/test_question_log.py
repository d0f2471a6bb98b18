"""Each answered question is logged with what was searched, how long each step took, the
model, its tokens and cost, whether it was refused and how many citations held; a memory
command and a stopped answer are not."""

from __future__ import annotations

from analytics.models import QuestionLog
from billing.models import Usage
from generation.answering import answer_question, stream_answer
from generation.tests.passages import BREAD, HERONS, TRAINS


def test_an_answer_is_logged_with_its_times_tokens_and_citations(
    fake_openai, owner, notebook, add_ready_source
):
    herons = add_ready_source(notebook, HERONS, "herons.txt")
    add_ready_source(notebook, TRAINS, "trains.txt")
    fake_openai.chat_replies.append("Herons wait at the edge of the pond [1].")

    answer = answer_question(user=owner, notebook=notebook, question="Where do herons wait?")

    log = QuestionLog.objects.get()
    assert (log.notebook, log.user, log.message) == (notebook, owner, answer.message)
    assert log.question == "Where do herons wait?" and log.search_query == ""
    assert (log.mode, log.model, log.refused) == ("llm", "fake-chat", False)
    assert 0 <= log.retrieval_ms <= log.first_word_ms <= log.total_ms
    spent = Usage.objects.filter(message=answer.message)
    assert {row.kind for row in spent} == {"embedding", "chat"}
    assert log.input_tokens == sum(row.input_tokens for row in spent) > 0
    assert log.output_tokens == sum(row.output_tokens for row in spent) > 0
    assert log.cost == sum(row.cost for row in spent)
    assert (log.citations, log.supported_citations) == (1, 1)
    assert log.cited_source_ids == [herons.pk]


def test_an_unsupported_citation_is_counted(fake_openai, owner, notebook, add_ready_source):
    add_ready_source(notebook, HERONS, "herons.txt")
    fake_openai.chat_replies.append("Herons are the fastest birds on earth [1].")

    answer_question(user=owner, notebook=notebook, question="Where do herons wait?")

    log = QuestionLog.objects.get()
    assert (log.citations, log.supported_citations) == (1, 0)


def test_a_refusal_is_logged_as_refused(fake_openai, owner, notebook, add_ready_source):
    add_ready_source(notebook, BREAD, "bread.txt")
    fake_openai.chat_replies.append("NOT_IN_SOURCES")

    answer_question(user=owner, notebook=notebook, question="How fast do bread starters fly?")

    log = QuestionLog.objects.get()
    assert log.refused and log.mode == "refusal" and log.citations == 0


def test_an_empty_notebooks_refusal_ran_no_search(owner, notebook):
    answer_question(user=owner, notebook=notebook, question="Anything?")

    log = QuestionLog.objects.get()
    assert log.refused and log.retrieval_ms is None and log.first_word_ms == log.total_ms


def test_a_memory_command_is_not_logged(owner, notebook):
    answer_question(user=owner, notebook=notebook, question="/remember Be brief.")

    assert not QuestionLog.objects.exists()


def test_a_streamed_answer_is_logged_with_its_first_word(
    fake_openai, owner, notebook, add_ready_source
):
    add_ready_source(notebook, HERONS, "herons.txt")
    fake_openai.chat_replies.append("Herons wait at the edge of the pond [1].")

    items = list(stream_answer(user=owner, notebook=notebook, question="Where do herons wait?"))

    log = QuestionLog.objects.get()
    assert log.message == items[-1].message
    assert log.retrieval_ms <= log.first_word_ms <= log.total_ms


def test_a_stopped_answer_is_not_logged(fake_openai, owner, notebook, add_ready_source):
    add_ready_source(notebook, HERONS, "herons.txt")
    fake_openai.chat_replies.append("Herons wait at the edge of the pond [1].")

    answers = stream_answer(user=owner, notebook=notebook, question="Where do herons wait?")
    next(answers)  # the evidence
    next(answers)  # the first words
    answers.close()

    assert not QuestionLog.objects.exists()
