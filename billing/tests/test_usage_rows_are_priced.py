from decimal import Decimal

import pytest
from PIL import Image

from billing.models import CreditEntry, Usage
from generation.answering import answer_question
from providers import vision
from providers.chat import chat
from providers.embeddings import configured_model, embed_query, embed_texts
from providers.errors import ProviderError

MILLION = Decimal(1_000_000)


def test_an_embedding_call_writes_one_row_priced_per_million_input_tokens(owner, fake_openai):
    embed_query("sea otters hold hands", user=owner, model=configured_model())

    usage = Usage.objects.get()
    assert usage.user == owner
    assert (usage.kind, usage.model) == ("embedding", "fake-embed")
    assert usage.input_tokens == 4  # the fake server counts words
    assert usage.cost == 4 * Decimal("0.1") / MILLION


def test_each_embedding_batch_is_one_row(owner, fake_openai, settings):
    settings.EMBEDDING_BATCH_SIZE = 2

    embed_texts(["one", "two three", "four"], user=owner, model=configured_model())

    assert len(fake_openai.embedding_requests) == 2
    assert sorted(Usage.objects.values_list("input_tokens", flat=True)) == [1, 3]


def test_a_chat_call_writes_one_row_priced_for_input_and_output(owner, fake_openai):
    fake_openai.chat_replies.append("four five")

    chat([{"role": "user", "content": "one two three"}], user=owner)

    usage = Usage.objects.get()
    assert (usage.kind, usage.model) == ("chat", "fake-chat")
    assert (usage.input_tokens, usage.output_tokens) == (3, 2)
    assert usage.cost == (3 * Decimal(2) + 2 * Decimal(8)) / MILLION


def test_the_cost_is_debited_from_the_users_credit_with_the_row(owner, fake_openai):
    fake_openai.chat_replies.append("four five")

    chat([{"role": "user", "content": "one two three"}], user=owner)

    usage = Usage.objects.get()
    debit = CreditEntry.objects.get(kind=CreditEntry.Kind.DEBIT)
    assert debit.usage == usage
    assert debit.user == owner
    assert debit.amount == -usage.cost


def test_a_billed_call_with_a_useless_answer_is_still_recorded(owner, fake_openai):
    # The provider answered (and billed) with vectors of the wrong size.
    fake_openai.force_dimensions = 32

    with pytest.raises(ProviderError):
        embed_query("sea otters", user=owner, model=configured_model())

    usage = Usage.objects.get()
    assert usage.cost == 2 * Decimal("0.1") / MILLION


def test_a_call_the_provider_refused_is_not_recorded(owner, fake_openai):
    fake_openai.fail_next("500", times=5)

    with pytest.raises(ProviderError):
        embed_query("sea otters", user=owner, model=configured_model())

    assert not Usage.objects.exists()


def test_local_models_are_recorded_at_no_cost(owner, settings):
    settings.OPENAI_BASE_URL = ""

    embed_query("sea otters", user=owner, model=configured_model())

    usage = Usage.objects.get()
    assert usage.model == "local/multilingual-e5-small"
    assert usage.input_tokens > 0
    assert usage.cost == 0
    assert not CreditEntry.objects.filter(kind=CreditEntry.Kind.DEBIT).exists()


def test_processing_a_source_bills_its_embeddings_to_the_source(
    notebook, fake_openai, add_ready_source
):
    source = add_ready_source(notebook, b"Sea otters hold hands while they sleep.")

    usage = Usage.objects.get()
    assert usage.source == source
    assert usage.user == notebook.owner
    assert usage.kind == "embedding"


def test_an_answer_bills_its_calls_to_the_notebook_and_the_answer(
    notebook, fake_openai, add_ready_source
):
    add_ready_source(notebook, b"Sea otters hold hands while they sleep.")
    fake_openai.chat_replies.append("They hold hands [1].")

    answer = answer_question(user=notebook.owner, notebook=notebook, question="Do otters sleep?")

    rows = Usage.objects.filter(message=answer.message)
    assert sorted(rows.values_list("kind", flat=True)) == ["chat", "embedding"]
    assert all(row.notebook == notebook for row in rows)
    assert all(row.cost > 0 for row in rows)


def test_a_vision_call_writes_one_row_priced_for_tokens_and_the_image(owner, fake_openai, settings):
    settings.VISION_MODEL = "fake-vision"
    settings.MODEL_PRICES = {
        **settings.MODEL_PRICES,
        "fake-vision": {"input_per_million": "2", "output_per_million": "8", "per_image": "0.01"},
    }
    fake_openai.vision_replies.append("EXIT")

    vision.read_image(Image.new("RGB", (40, 30), "green"), user=owner)

    usage = Usage.objects.get()
    assert (usage.kind, usage.images) == ("vision", 1)
    assert usage.output_tokens == 1
    expected = (usage.input_tokens * Decimal(2) + 8) / MILLION + Decimal("0.01")
    assert usage.cost == expected
