"""The database work a streamed answer does before its model call, pinned.

Every statement before the chat request is time the reader waits for the first word
(bench/stream_overhead.py). These counts are what the checks need: the
session and the user, the credit (once), the rate limit (one statement), the notebook
(and the conversation with its history), its sources with the asker's choice of them (one
statement), the active embedding model, the search and the asker's remembered facts. The
question's usage row and debit are written after the chat request, while the model thinks
(billing.services.deferred_usage).
A new statement here must earn its place: raise the pin only with a reason.
"""

import pytest
from django.db import connection
from django.urls import reverse

from billing.models import Usage
from generation.tests.passages import BREAD, HERONS, TRAINS
from limits.models import RateCounter
from limits.rates import Rate
from notebooks.models import Message
from notebooks.tests.streaming import parse, read_all

# session, user, credit, rate limit, notebook, its sources with what the asker ticked of
# them (one statement), embedding model, the search (its settings, and the ranking statement,
# which also loads the hits' chunks: two prepared statements in one round trip, a pipeline),
# whether the hits cover the question (retrieval/coverage.py: a question they do not cover
# gets its answer with no model call), the asker's remembered facts (memory/: they go into
# the system prompt, so they are read before it is sent)
BEFORE_THE_MODEL_CALL = 11
# ... and the conversation asked in, and its history, but not the coverage: with a chat
# model a follow-up is left to the model
BEFORE_THE_MODEL_CALL_IN_A_CONVERSATION = BEFORE_THE_MODEL_CALL - 1 + 2


def _ask_counting(client, fake_openai, notebook, data) -> tuple[list[str], list[tuple]]:
    """Ask through the streaming view; the statements run before the chat request reached
    the model server, and the events."""
    chats_before = len(fake_openai.chat_requests)
    before_chat: list[str] = []

    def count(execute, sql, params, many, context):
        if len(fake_openai.chat_requests) == chats_before:
            before_chat.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(count):
        response = client.post(reverse("notebooks:ask_stream", args=[notebook.pk]), data)
        parts, _ = read_all(response)
    assert len(fake_openai.chat_requests) == chats_before + 1
    return before_chat, parse(parts)


# Outside a test transaction, as in production: no savepoints among the statements.
@pytest.mark.django_db(transaction=True)
def test_a_streamed_answer_reaches_the_model_after_a_pinned_number_of_statements(
    client, owner, notebook, fake_openai, add_ready_source, settings
):
    settings.RATE_LIMIT_ASK = Rate(30, 10**9)  # one window for the whole test
    for text, name in [(HERONS, "herons.txt"), (TRAINS, "trains.txt"), (BREAD, "bread.txt")]:
        add_ready_source(notebook, text, name)
    fake_openai.chat_replies.extend(["Herons wait at the pond [1].", "Alone, mostly [1]."])
    client.force_login(owner)

    first, events = _ask_counting(
        client, fake_openai, notebook, {"question": "Where do herons wait?"}
    )
    assert len(first) == BEFORE_THE_MODEL_CALL, "\n".join(first)
    conversation = events[-1][1]["conversation"]

    follow_up, events = _ask_counting(
        client,
        fake_openai,
        notebook,
        {"question": "Do they wait alone?", "conversation": conversation},
    )
    assert len(follow_up) == BEFORE_THE_MODEL_CALL_IN_A_CONVERSATION, "\n".join(follow_up)

    # Fewer statements, the same work: the credit was checked, the ask was counted, the
    # history went to the model, the embedding was billed, and both answers were stored.
    assert sum("billing_creditbalance" in sql for sql in follow_up) == 1
    assert RateCounter.objects.get(key=f"ask:user:{owner.pk}").count == 2
    history = fake_openai.chat_requests[-1].body["messages"]
    assert [turn["role"] for turn in history] == ["system", "user", "assistant", "user"]
    assert history[2]["content"] == "Herons wait at the pond [1]."
    questions_embedded = Usage.objects.filter(
        kind=Usage.Kind.EMBEDDING, message__conversation_id=conversation
    )
    assert questions_embedded.count() == 2
    assert Message.objects.filter(conversation_id=conversation).count() == 4
