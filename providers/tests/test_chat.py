import pytest

from billing.models import Usage
from providers.chat import chat, chat_available
from providers.errors import ProviderError

QUESTION = [{"role": "user", "content": "Where do herons wait?"}]


def test_a_scripted_reply_comes_back_with_its_model_and_is_metered(fake_openai, owner):
    fake_openai.chat_replies.append("By the pond [1].")

    reply = chat(QUESTION, user=owner)

    assert (reply.text, reply.model) == ("By the pond [1].", "fake-chat")
    usage = Usage.objects.get()
    assert (usage.kind, usage.model, usage.user) == ("chat", "fake-chat", owner)
    assert (usage.input_tokens, usage.output_tokens) == (4, 4)


def test_a_server_error_is_retried_once_then_succeeds(fake_openai, db):
    fake_openai.fail_next("500")
    fake_openai.chat_replies.append("By the pond.")

    assert chat(QUESTION, user=None).text == "By the pond."
    assert [r.answered_with for r in fake_openai.chat_requests] == ["500", "ok"]


def test_a_body_that_is_not_json_raises_a_provider_error(fake_openai, db):
    fake_openai.fail_next("garbage")

    with pytest.raises(ProviderError) as failure:
        chat(QUESTION, user=None)

    assert str(failure.value).startswith(
        f"The chat model at {fake_openai.base_url} gave an answer Loupe cannot use"
    )
    assert "not JSON" in str(failure.value)
    assert Usage.objects.count() == 0


def test_a_slow_chat_model_times_out(fake_openai, db, settings):
    settings.CHAT_TIMEOUT_SECONDS = 0.3
    fake_openai.slow_seconds = 2
    fake_openai.fail_next("slow", times=2)

    with pytest.raises(ProviderError, match="did not answer in time"):
        chat(QUESTION, user=None)


def test_without_a_model_server_there_is_no_chat(settings):
    settings.OPENAI_BASE_URL = ""

    assert not chat_available()
    with pytest.raises(ProviderError, match="No chat model is configured"):
        chat(QUESTION, user=None)
