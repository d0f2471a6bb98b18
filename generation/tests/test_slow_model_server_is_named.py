"""Whoever asks reads that the model server is slow, within the bound, and nothing is
stored: the streamed page and the whole answer alike."""

import time

import pytest

from generation.answering import answer_question
from generation.tests.passages import BREAD, HERONS, TRAINS
from notebooks.models import Message
from notebooks.tests.streaming import ask_stream, parse, read_all


@pytest.fixture
def library(fake_openai, notebook, add_ready_source, settings):
    settings.CHAT_FIRST_TOKEN_SECONDS = 1.0
    settings.CHAT_IDLE_SECONDS = 0.3
    settings.CHAT_TIMEOUT_SECONDS = 1.0
    return [
        add_ready_source(notebook, HERONS, "herons.txt"),
        add_ready_source(notebook, TRAINS, "trains.txt"),
        add_ready_source(notebook, BREAD, "bread.txt"),
    ]


def test_a_stalled_stream_ends_the_page_with_the_slow_server_message(
    client, owner, notebook, library, fake_openai
):
    fake_openai.chat_replies.append("Grey herons wait motionless at the edge of the pond [1].")
    fake_openai.stream_stall_after = 2
    fake_openai.stream_stall_seconds = 10
    client.force_login(owner)
    started = time.monotonic()

    parts, _ = read_all(ask_stream(client, notebook, question="Where do herons wait?"))

    assert time.monotonic() - started < 4
    events = parse(parts)
    assert [name for name, _ in events] == ["evidence", "delta", "delta", "error"]
    assert "stopped writing for 0.3 s: the model server is slow" in events[-1][1]["error"]
    assert not Message.objects.exists()
    assert len(fake_openai.chat_requests) == 1


def test_a_whole_answer_from_a_slow_server_fails_naming_it(owner, notebook, library, fake_openai):
    fake_openai.slow_seconds = 10
    fake_openai.fail_next("slow", endpoint="chat/completions", times=3)
    started = time.monotonic()

    with pytest.raises(Exception, match=r"did not answer in time \(1 s\): the model server is"):
        answer_question(user=owner, notebook=notebook, question="Where do herons wait?")

    assert time.monotonic() - started < 4
    assert len(fake_openai.chat_requests) == 1
    assert not Message.objects.exists()
