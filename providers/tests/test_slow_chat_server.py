"""A slow model server (a CPU reading a long prompt): a streamed answer may take long to its
first word and long in all, but not stall between words; a request the server took on is
never sent again; the person reads that the server is slow within the bound."""

import time

import pytest

from providers.chat import chat, chat_stream
from providers.errors import ProviderError

QUESTION = [{"role": "user", "content": "Where do herons wait?"}]
REPLY = "Herons wait by the pond until a fish swims past [1]."


@pytest.fixture
def bounds(settings):
    settings.CHAT_FIRST_TOKEN_SECONDS = 1.5
    settings.CHAT_IDLE_SECONDS = 0.4
    settings.OPENAI_MAX_RETRIES = 2
    return settings


def test_a_first_word_slower_than_the_idle_gap_is_waited_for(fake_openai, owner, bounds):
    fake_openai.chat_replies.append(REPLY)
    fake_openai.stream_first_delay = 0.8  # past the idle gap, within the first-word bound

    assert "".join(chat_stream(QUESTION, user=owner)) == REPLY


def test_an_answer_longer_than_both_bounds_is_not_cut_off(fake_openai, owner, bounds):
    fake_openai.chat_replies.append(REPLY)
    fake_openai.stream_delay = 0.15  # 13 chunks: about 2 s in all
    started = time.monotonic()

    text = "".join(chat_stream(QUESTION, user=owner))

    assert text == REPLY
    assert time.monotonic() - started > bounds.CHAT_FIRST_TOKEN_SECONDS


def test_no_first_word_in_time_fails_saying_the_server_is_slow(fake_openai, owner, bounds):
    fake_openai.chat_replies.append(REPLY)
    fake_openai.stream_first_delay = 5
    started = time.monotonic()

    with pytest.raises(ProviderError) as failure:
        "".join(chat_stream(QUESTION, user=owner))

    assert time.monotonic() - started < 3
    assert "did not answer in time (1.5 s): the model server is slow" in str(failure.value)
    assert "CHAT_FIRST_TOKEN_SECONDS" in str(failure.value)
    assert len(fake_openai.chat_requests) == 1  # not sent again


def test_a_stall_mid_answer_fails_within_the_idle_gap(fake_openai, owner, bounds):
    fake_openai.chat_replies.append(REPLY)
    fake_openai.stream_stall_after = 3
    fake_openai.stream_stall_seconds = 5
    stream = chat_stream(QUESTION, user=owner)
    started = time.monotonic()

    with pytest.raises(ProviderError, match=r"stopped writing for 0\.4 s"):
        for _ in stream:
            pass

    assert time.monotonic() - started < 2.5
    assert stream.text == "Herons wait by"
    assert len(fake_openai.chat_requests) == 1
    assert stream.usage is not None  # what was written is still billed


def test_a_stream_whose_headers_are_late_is_not_sent_again(fake_openai, owner, bounds):
    fake_openai.slow_seconds = 5
    fake_openai.fail_next("slow", times=3)
    started = time.monotonic()

    with pytest.raises(ProviderError, match="did not answer in time"):
        chat_stream(QUESTION, user=owner)

    assert time.monotonic() - started < 3
    assert len(fake_openai.chat_requests) == 1


def test_a_reply_that_is_not_streamed_gets_its_own_budget_and_one_try(fake_openai, owner, bounds):
    bounds.CHAT_TIMEOUT_SECONDS = 0.5
    fake_openai.slow_seconds = 5
    fake_openai.fail_next("slow", times=3)

    with pytest.raises(ProviderError, match=r"did not answer in time \(0\.5 s\)") as failure:
        chat(QUESTION, user=owner)

    assert "CHAT_TIMEOUT_SECONDS" in str(failure.value)
    assert len(fake_openai.chat_requests) == 1


@pytest.mark.parametrize("status", ["500", "429"])
@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
def test_a_refused_request_is_sent_again(fake_openai, owner, bounds, status, streamed):
    fake_openai.chat_replies.append(REPLY)
    fake_openai.fail_next(status, times=2)

    text = (
        "".join(chat_stream(QUESTION, user=owner)) if streamed else chat(QUESTION, user=owner).text
    )

    assert text == REPLY
    assert [request.answered_with for request in fake_openai.chat_requests] == [
        status,
        status,
        "ok",
    ]


def test_an_unreachable_server_is_named_as_unreachable(fake_openai, owner, bounds):
    bounds.OPENAI_BASE_URL = "http://127.0.0.1:9/v1"  # the discard port: nothing listens
    bounds.OPENAI_MAX_RETRIES = 1

    with pytest.raises(ProviderError, match="cannot be reached; is the server running"):
        chat_stream(QUESTION, user=owner)
