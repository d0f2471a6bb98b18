from billing.models import Usage
from language.tokens import estimate_tokens
from providers.chat import chat
from providers.embeddings import configured_model, embed_texts


def test_embeddings_from_a_server_that_reports_no_usage_are_counted_locally(owner, fake_openai):
    fake_openai.omit_usage = True

    embed_texts(["Herons eat fish and frogs."], user=owner, model=configured_model())

    row = Usage.objects.get(kind="embedding")
    assert row.input_tokens == estimate_tokens("Herons eat fish and frogs.") > 0


def test_a_chat_reply_without_usage_is_counted_locally_in_both_directions(owner, fake_openai):
    fake_openai.omit_usage = True
    fake_openai.chat_replies.append("Herons eat fish [1].")

    chat([{"role": "user", "content": "What do herons eat?"}], user=owner)

    row = Usage.objects.get(kind="chat")
    assert row.input_tokens == estimate_tokens("What do herons eat?")
    assert row.output_tokens == estimate_tokens("Herons eat fish [1].")
    assert row.cost > 0


def test_a_reported_count_is_used_as_given(owner, fake_openai):
    fake_openai.chat_replies.append("Herons eat fish [1].")

    chat([{"role": "user", "content": "What do herons eat?"}], user=owner)

    # The fake server counts words, which differs from the local estimate here.
    row = Usage.objects.get(kind="chat")
    assert row.output_tokens == 4
