import pytest

from billing.models import Usage
from providers.chat import chat_stream
from providers.errors import ProviderError

QUESTION = [{"role": "user", "content": "Where do herons wait?"}]
REPLY = "Herons wait by the pond until a fish swims past [1]."


def test_text_arrives_before_the_server_has_sent_the_rest(fake_openai, owner):
    fake_openai.chat_replies.append(REPLY)
    fake_openai.stream_delay = 0.2

    stream = chat_stream(QUESTION, user=owner)
    deltas = iter(stream)
    first = next(deltas)

    assert first == "Herons"
    # Ten words, a finish chunk and a usage chunk: most are still unsent.
    assert fake_openai.chunks_sent < 5
    fake_openai.stream_delay = 0
    assert first + "".join(deltas) == REPLY
    assert fake_openai.chat_requests[0].body["stream"] is True


def test_a_finished_stream_writes_one_usage_row_with_the_reported_tokens(fake_openai, owner):
    fake_openai.chat_replies.append(REPLY)

    stream = chat_stream(QUESTION, user=owner)

    assert "".join(stream) == REPLY
    usage = Usage.objects.get()
    assert stream.usage == usage
    assert (usage.kind, usage.model, usage.user) == ("chat", "fake-chat", owner)
    assert (usage.input_tokens, usage.output_tokens) == (4, 11)


def test_without_a_usage_chunk_the_tokens_are_estimated(fake_openai, owner):
    fake_openai.omit_usage = True
    fake_openai.chat_replies.append(REPLY)

    "".join(chat_stream(QUESTION, user=owner))

    usage = Usage.objects.get()
    assert usage.input_tokens > 0 and usage.output_tokens > 0


def test_a_reader_that_stops_early_still_writes_one_usage_row(fake_openai, owner):
    fake_openai.omit_usage = True
    fake_openai.chat_replies.append(REPLY)
    stream = chat_stream(QUESTION, user=owner)
    deltas = iter(stream)
    next(deltas)

    stream.close()
    stream.close()

    usage = Usage.objects.get()
    assert usage.output_tokens == 1  # "Herons", estimated over the text received
    assert stream.text == "Herons"


def test_a_stream_closed_before_its_first_delta_writes_one_usage_row(fake_openai, owner):
    fake_openai.chat_replies.append(REPLY)

    chat_stream(QUESTION, user=owner).close()

    assert Usage.objects.get().output_tokens == 0


def test_a_server_error_raises_a_readable_provider_error(fake_openai, db):
    fake_openai.fail_next("500", times=2)

    with pytest.raises(ProviderError, match=r"answered with an error \(HTTP 500\)"):
        chat_stream(QUESTION, user=None)

    assert Usage.objects.count() == 0


def test_an_empty_streamed_answer_is_a_provider_error(fake_openai, db):
    fake_openai.chat_replies.append("")

    with pytest.raises(ProviderError, match="empty answer"):
        "".join(chat_stream(QUESTION, user=None))

    assert Usage.objects.count() == 1
