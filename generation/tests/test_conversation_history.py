"""Earlier turns go to the chat model within CHAT_HISTORY_TOKENS, newest first."""

from generation import prompts
from generation.answering import answer_question
from language.tokens import estimate_tokens
from notebooks.models import Conversation, Message


def test_history_keeps_the_newest_turns_that_fit_the_budget(
    fake_openai, settings, owner, notebook, add_ready_source
):
    add_ready_source(notebook, b"Grey herons wait motionless at the edge of the pond.")
    conversation = Conversation.objects.create(notebook=notebook, user=notebook.owner)
    turns = [f"Turn {i}: " + "heron " * 20 for i in range(6)]
    for i, text in enumerate(turns):
        role = Message.Role.USER if i % 2 == 0 else Message.Role.ASSISTANT
        Message.objects.create(conversation=conversation, role=role, content=text)
    # Room for the last three turns, not for a fourth.
    settings.CHAT_HISTORY_TOKENS = estimate_tokens(*turns[-3:]) + estimate_tokens(turns[2]) - 1
    fake_openai.chat_replies.append("Herons wait [1].")

    answer_question(user=owner, notebook=notebook, question="And then?", conversation=conversation)

    sent = fake_openai.chat_requests[0].body["messages"]
    assert [message["content"] for message in sent[1:-1]] == turns[-3:]
    assert sent[-1]["content"].endswith(
        f"Question: And then?\n\n{prompts.citation_reminder('And then?')}"
    )


def test_no_history_with_a_zero_budget(fake_openai, settings, owner, notebook, add_ready_source):
    add_ready_source(notebook, b"Grey herons wait motionless at the edge of the pond.")
    fake_openai.chat_replies += ["Herons wait [1].", "By the pond [1]."]
    first = answer_question(user=owner, notebook=notebook, question="Where do herons wait?")
    settings.CHAT_HISTORY_TOKENS = 0

    # Without its history the follow-up is judged on its own words: it names what it asks
    # about, or it would be refused as not covered before any model call.
    answer_question(
        user=owner,
        notebook=notebook,
        question="How long do herons wait at the pond?",
        conversation=first.conversation,
    )

    assert [m["role"] for m in fake_openai.chat_requests[1].body["messages"]] == ["system", "user"]


def test_a_clients_turns_keep_the_newest_that_fit_the_budget(
    fake_openai, settings, owner, notebook, add_ready_source
):
    add_ready_source(notebook, b"Grey herons wait motionless at the edge of the pond.")
    texts = [f"Turn {i}: " + "heron " * 20 for i in range(4)]
    turns = [("user" if i % 2 == 0 else "assistant", text) for i, text in enumerate(texts)]
    settings.CHAT_HISTORY_TOKENS = estimate_tokens(*texts[-2:]) + estimate_tokens(texts[1]) - 1
    fake_openai.chat_replies.append("Herons wait [1].")

    answer_question(user=owner, notebook=notebook, question="And then?", turns=turns)

    sent = fake_openai.chat_requests[0].body["messages"]
    assert [(m["role"], m["content"]) for m in sent[1:-1]] == turns[-2:]
