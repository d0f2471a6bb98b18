"""RETRIEVAL_QUERY_REWRITE: a follow-up is rewritten into a standalone query by one cheap,
metered chat call and searched with it; the answer's prompt keeps the question as asked.
Never on a first question, when off, or without a chat model; a failed or unusable
rewrite falls back to the question."""

import json
import logging
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from billing.models import CreditEntry, Usage
from generation import prompts, rewrite
from generation.answering import answer_question, stream_answer
from generation.tests.passages import BREAD, HERONS, TRAINS, prompt_passages
from notebooks.models import Message
from providers.tests.fake_openai import count_words

REWRITTEN = "How long does sourdough bread starter need to be fed with flour?"


@pytest.fixture
def library(fake_openai, notebook, add_ready_source, settings):
    settings.RETRIEVAL_QUERY_REWRITE = "on"
    return [
        add_ready_source(notebook, HERONS, "herons.txt"),
        add_ready_source(notebook, TRAINS, "trains.txt"),
        add_ready_source(notebook, BREAD, "bread.txt"),
    ]


@pytest.fixture
def first(fake_openai, owner, notebook, library):
    """A conversation with one exchange about bread; its requests are then forgotten."""
    fake_openai.chat_replies.append("Sourdough needs a starter fed every day [1].")
    answer = answer_question(
        user=owner, notebook=notebook, question="What does sourdough bread need?"
    )
    fake_openai.requests.clear()
    Usage.objects.all().delete()
    return answer


def embedded_queries(fake_openai) -> list[str]:
    return [request.body["input"][0] for request in fake_openai.embedding_requests]


def follow_up(owner, notebook, first, question="And for how long?"):
    return answer_question(
        user=owner, notebook=notebook, question=question, conversation=first.conversation
    )


def test_the_model_is_shown_worked_examples_before_the_conversation(
    fake_openai, owner, notebook, first
):
    fake_openai.chat_replies += [REWRITTEN, "Every day [1]."]

    follow_up(owner, notebook, first)

    messages = fake_openai.chat_requests[0].body["messages"]
    # The system prompt, each example as an exchange of its own, then the conversation.
    assert [m["role"] for m in messages] == (
        ["system"] + ["user", "assistant"] * len(rewrite.EXAMPLES) + ["user"]
    )
    for (turns, question, query), asked, answered in zip(
        rewrite.EXAMPLES, messages[1:-1:2], messages[2:-1:2], strict=True
    ):
        assert asked["content"] == rewrite.build_prompt(question=question, turns=turns)
        assert answered["content"] == query
        # Each shows a rewrite the checks keep: a query, not an answer.
        assert rewrite.derailed(query, question=question, turns=turns) is None
    assert "Last question: And for how long?" in messages[-1]["content"]


def test_the_follow_up_is_searched_as_rewritten_and_answered_as_asked(
    fake_openai, owner, notebook, first
):
    fake_openai.chat_replies += [REWRITTEN, "Every day [1]."]

    answer = follow_up(owner, notebook, first)

    rewrite_request, answer_request = fake_openai.chat_requests
    # One cheap call: temperature 0, few tokens, the turns and the question in its prompt.
    assert rewrite_request.body["temperature"] == 0
    assert rewrite_request.body["max_tokens"] == rewrite.MAX_TOKENS
    prompt = rewrite_request.body["messages"][-1]["content"]
    assert "User: What does sourdough bread need?" in prompt
    assert "Assistant: Sourdough needs a starter fed every day." in prompt  # no marker
    assert "Last question: And for how long?" in prompt
    # The search embeds the rewritten query...
    assert embedded_queries(fake_openai) == [REWRITTEN]
    # ...and the bread passage, which shares its words, comes first.
    assert prompt_passages(answer_request)[1] == BREAD.decode()
    # The answer's prompt gets the question as asked, after the earlier turns.
    sent = answer_request.body["messages"]
    assert [m["content"] for m in sent[1:3]] == [
        "What does sourdough bread need?",
        "Sourdough needs a starter fed every day [1].",
    ]
    assert sent[-1]["content"].endswith(
        f"Question: And for how long?\n\n{prompts.citation_reminder('And for how long?')}"
    )
    # The rewrite is kept with the question.
    assert answer.question.content == "And for how long?"
    assert answer.question.search_query == REWRITTEN
    assert answer.search_query == REWRITTEN


def test_a_follow_up_that_asks_yes_or_no_as_rewritten_gets_the_yes_or_no_reminder(
    fake_openai, owner, notebook, first
):
    # "And daily?" holds no interrogative either way; its rewrite decides.
    fake_openai.chat_replies += ["Must the sourdough starter be fed daily?", "Yes, daily [1]."]

    follow_up(owner, notebook, first, question="And daily?")

    prompt = fake_openai.chat_requests[-1].body["messages"][-1]["content"]
    assert prompts.YES_OR_NO_REMINDER in prompt

    fake_openai.chat_replies += [REWRITTEN, "Every day [1]."]
    follow_up(owner, notebook, first, question="And daily?")

    prompt = fake_openai.chat_requests[-1].body["messages"][-1]["content"]
    assert prompts.YES_OR_NO_REMINDER not in prompt


def test_the_full_text_side_matches_the_rewritten_words(
    fake_openai, owner, notebook, first, settings
):
    settings.RETRIEVAL_MODE = "hybrid"
    # No chunk reaches this floor by similarity: only full-text matches are passages.
    settings.SIMILARITY_FLOOR = 1.01
    fake_openai.chat_replies += ["When does the night train to Vienna leave?", "At eleven [1]."]

    # (A rewrite sharing no word with the conversation would be discarded.)
    follow_up(owner, notebook, first, question="And what about the night one?")

    assert list(prompt_passages(fake_openai.chat_requests[1]).values()) == [TRAINS.decode()]


def test_the_rewrite_call_is_metered_and_billed_to_the_answer(fake_openai, owner, notebook, first):
    fake_openai.chat_replies += [REWRITTEN, "Every day [1]."]

    answer = follow_up(owner, notebook, first)

    rewrite_row, answer_row = Usage.objects.filter(kind="chat").order_by("pk")
    sent = fake_openai.chat_requests[0].body["messages"]
    assert rewrite_row.model == "fake-chat"
    assert rewrite_row.input_tokens == sum(count_words(m["content"]) for m in sent)
    assert rewrite_row.output_tokens == count_words(REWRITTEN)
    assert rewrite_row.cost > 0
    assert (rewrite_row.notebook_id, rewrite_row.message_id) == (notebook.pk, answer.message.pk)
    assert CreditEntry.objects.get(usage=rewrite_row).amount == -rewrite_row.cost
    assert answer_row.message_id == answer.message.pk


def test_the_first_question_of_a_conversation_is_not_rewritten(
    fake_openai, owner, notebook, library
):
    fake_openai.chat_replies.append("A starter [1].")

    answer = answer_question(user=owner, notebook=notebook, question="What does bread need?")

    assert len(fake_openai.chat_requests) == 1  # the answer alone
    assert embedded_queries(fake_openai)[-1] == "What does bread need?"
    assert answer.question.search_query == ""
    assert answer.search_query == "What does bread need?"


def test_nothing_is_rewritten_when_the_setting_is_off(
    fake_openai, owner, notebook, first, settings
):
    settings.RETRIEVAL_QUERY_REWRITE = "off"
    fake_openai.chat_replies.append("Every day [1].")

    answer = follow_up(owner, notebook, first)

    assert len(fake_openai.chat_requests) == 1
    assert embedded_queries(fake_openai) == ["And for how long?"]
    assert answer.question.search_query == ""


def test_nothing_is_rewritten_without_a_chat_model(fake_openai, owner, notebook, first, settings):
    settings.CHAT_MODEL = ""  # extractive answers, embeddings still from the server

    answer = follow_up(owner, notebook, first, question="And sourdough bread, for how long?")

    assert fake_openai.chat_requests == []
    assert embedded_queries(fake_openai) == ["And sourdough bread, for how long?"]
    assert answer.message.mode == Message.Mode.EXTRACTIVE
    assert answer.question.search_query == ""


@pytest.mark.parametrize(
    ("failure", "reply"),
    [
        ("500", None),  # the call fails, the retry too
        ("garbage", None),  # a body that is not JSON (not retried)
        (None, ""),  # an empty reply
        (None, '""'),  # nothing but quotes
        (None, "Sourdough bread " * 60),  # cut off at max_tokens: an answer, not a query
    ],
)
def test_a_failed_or_unusable_rewrite_falls_back_to_the_question(
    fake_openai, owner, notebook, first, caplog, settings, failure, reply
):
    if failure:
        attempts = 1 + settings.OPENAI_MAX_RETRIES if failure == "500" else 1
        fake_openai.fail_next(failure, times=attempts, endpoint="chat/completions")
    else:
        fake_openai.chat_replies.append(reply)
    fake_openai.chat_replies.append("Every day [1].")

    with caplog.at_level(logging.WARNING, logger="generation.rewrite"):
        answer = follow_up(owner, notebook, first)

    assert answer.message.content == "Every day [1]."
    assert embedded_queries(fake_openai) == ["And for how long?"]
    assert answer.question.search_query == ""
    assert "searching the question as asked" in caplog.text


def test_a_streamed_answer_searches_the_rewritten_follow_up(fake_openai, owner, notebook, first):
    fake_openai.chat_replies += [REWRITTEN, "Every day [1]."]

    _evidence, *deltas, answer = stream_answer(
        user=owner, notebook=notebook, question="And for how long?", conversation=first.conversation
    )

    assert "".join(deltas) == "Every day [1]."
    assert embedded_queries(fake_openai) == [REWRITTEN]
    assert answer.question.search_query == REWRITTEN
    assert set(Usage.objects.filter(kind="chat").values_list("message_id", flat=True)) == {
        answer.message.pk
    }


def test_ask_continues_a_conversation_and_prints_the_search_query(
    fake_openai, owner, notebook, first
):
    fake_openai.chat_replies += [REWRITTEN, "Every day [1]."]
    out = StringIO()

    call_command(
        "ask",
        "And for how long?",
        user="owner",
        notebook="Research",
        conversation=first.conversation.pk,
        json=True,
        stdout=out,
    )

    printed = json.loads(out.getvalue())
    assert printed["search_query"] == REWRITTEN
    assert printed["conversation_id"] == first.conversation.pk
    assert first.conversation.messages.count() == 4


@pytest.mark.parametrize(
    ("reply", "query"),
    [
        ("Query: How long is bread fed?", "How long is bread fed?"),
        ('"How long is bread fed?"\n\nThis resolves "it".', "How long is bread fed?"),
        (
            "  Standalone query:  «Wie lange  wird Brot gefüttert?» ",
            "Wie lange wird Brot gefüttert?",
        ),
    ],
)
def test_a_label_quotes_and_extra_lines_are_cut_from_the_reply(reply, query):
    assert rewrite.clean(reply) == query


def test_the_prompt_keeps_the_last_turns_clipped():
    turns = [("user", f"question {n}") for n in range(10)] + [("assistant", "word " * 1000)]

    prompt = rewrite.build_prompt(question="And then?", turns=turns)

    assert "question 4" not in prompt and "question 5" in prompt
    assert len(prompt) < 2 * rewrite.TURN_CHARS


def test_the_conversation_page_shows_what_was_searched(client, fake_openai, owner, notebook, first):
    fake_openai.chat_replies += [REWRITTEN, "Every day [1]."]
    answer = follow_up(owner, notebook, first)
    client.force_login(owner)

    page = client.get(reverse("notebooks:conversation", args=[notebook.pk, answer.conversation.pk]))

    html = page.content.decode()
    assert f"Searched for: {REWRITTEN}" in html
    assert html.count("Searched for:") == 1  # not under the first question, searched as asked


def test_turns_a_client_holds_are_rewritten_from_as_a_stored_conversation_is(
    fake_openai, owner, notebook, library
):
    # The OpenAI chat API: the client sends the earlier turns; nothing is stored before.
    turns = [
        ("user", "What does sourdough bread need?"),
        ("assistant", "Sourdough needs a starter fed every day [1]."),
    ]
    fake_openai.requests.clear()  # the sources' embeddings
    fake_openai.chat_replies += [REWRITTEN, "Every day [1]."]

    answer = answer_question(
        user=owner, notebook=notebook, question="And for how long?", turns=turns
    )

    rewrite_request, answer_request = fake_openai.chat_requests
    prompt = rewrite_request.body["messages"][-1]["content"]
    assert "User: What does sourdough bread need?" in prompt
    assert "Last question: And for how long?" in prompt
    assert embedded_queries(fake_openai) == [REWRITTEN]
    assert answer.question.search_query == REWRITTEN
    sent = answer_request.body["messages"]
    assert [(m["role"], m["content"]) for m in sent[1:3]] == turns
    # A new conversation holds this exchange only: the client's turns were its to keep.
    assert list(answer.conversation.messages.values_list("content", flat=True)) == [
        "And for how long?",
        "Every day [1].",
    ]
