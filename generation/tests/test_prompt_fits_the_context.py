import pytest

from generation import prompts
from generation.answering import answer_question, stream_answer
from generation.tests.passages import BREAD, HERONS, TRAINS, prompt_passages
from language.tokens import estimate_tokens


@pytest.fixture
def library(fake_openai, notebook, add_ready_source):
    return [
        add_ready_source(notebook, HERONS, "herons.txt"),
        add_ready_source(notebook, TRAINS, "trains.txt"),
        add_ready_source(notebook, BREAD, "bread.txt"),
    ]


def sent_prompt(fake_openai) -> list[dict[str, str]]:
    return fake_openai.chat_requests[-1].body["messages"]


def test_passages_that_do_not_fit_the_context_are_left_out_whole_from_the_lowest_rank(
    fake_openai, owner, notebook, library, settings
):
    question = "Where do grey herons wait?"
    fake_openai.chat_replies.append("At the pond [1].")
    answer_question(user=owner, notebook=notebook, question=question)
    everything = sent_prompt(fake_openai)
    ranked = prompt_passages(fake_openai.chat_requests[-1])
    assert len(ranked) == 3
    # Room for the fixed part, the reply and two passages of the three, not the third.
    third = prompts.format_passage(3, "x", None, ranked[3])
    settings.CHAT_ANSWER_TOKENS = 100
    settings.CHAT_CONTEXT_TOKENS = (
        estimate_tokens(*(message["content"] for message in everything))
        + settings.CHAT_ANSWER_TOKENS
        - estimate_tokens(third) // 2
    )
    fake_openai.chat_replies.append("At the pond [1].")

    answer = answer_question(user=owner, notebook=notebook, question=question)

    kept = prompt_passages(fake_openai.chat_requests[-1])
    assert kept == {1: ranked[1], 2: ranked[2]}  # whole, in rank order
    assert [hit.chunk.text for hit in answer.passages] == [ranked[1], ranked[2]]
    assert sent_prompt(fake_openai)[-1]["content"].endswith(prompts.citation_reminder(question))


def test_a_context_without_room_for_any_passage_says_none_matched(
    fake_openai, owner, notebook, library, settings
):
    settings.CHAT_CONTEXT_TOKENS = 512
    settings.CHAT_ANSWER_TOKENS = 510
    fake_openai.chat_replies.append("I cannot tell.")

    answer = answer_question(user=owner, notebook=notebook, question="Where do herons wait?")

    assert "Passages: none matched the question." in sent_prompt(fake_openai)[-1]["content"]
    assert answer.citations == []


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
def test_the_reply_may_use_the_room_kept_for_it_and_no_more(
    fake_openai, owner, notebook, library, settings, streamed
):
    settings.CHAT_ANSWER_TOKENS = 300
    fake_openai.chat_replies.append("At the pond [1].")

    if streamed:
        list(stream_answer(user=owner, notebook=notebook, question="Where do herons wait?"))
    else:
        answer_question(user=owner, notebook=notebook, question="Where do herons wait?")

    assert fake_openai.chat_requests[-1].body["max_tokens"] == 300
