import pytest

from billing.models import Usage
from generation import prompts
from generation.answering import Answer, Evidence, stream_answer
from generation.tests.passages import BREAD, HERONS, TRAINS
from notebooks.models import Message
from texts.errors import UserFacingError


@pytest.fixture
def library(fake_openai, notebook, add_ready_source):
    return [
        add_ready_source(notebook, HERONS, "herons.txt"),
        add_ready_source(notebook, TRAINS, "trains.txt"),
        add_ready_source(notebook, BREAD, "bread.txt"),
    ]


def test_the_text_streams_then_the_answer_is_stored_with_mapped_verified_citations(
    fake_openai, owner, notebook, library
):
    fake_openai.chat_replies.append("Herons wait motionless at the edge of the pond [1][9].")

    items = list(stream_answer(user=owner, notebook=notebook, question="Where do herons wait?"))

    evidence, *deltas, answer = items
    # First the passages the model is given, with the sentence that matches the question.
    assert isinstance(evidence, Evidence)
    assert evidence.passages[0]["sentence"] == HERONS.decode()
    assert "".join(deltas) == "Herons wait motionless at the edge of the pond [1][9]."
    assert isinstance(answer, Answer)
    # The raw text streams as written; stored, a marker of no passage ([9]) is gone.
    assert answer.message.content == "Herons wait motionless at the edge of the pond [1]."
    assert answer.message.mode == Message.Mode.LLM
    (cited,) = answer.message.citations.all()
    assert cited.n == 1 and cited.supported is True
    assert cited.chunk.text == HERONS.decode()
    assert cited.quote in cited.chunk.text
    assert answer.question.content == "Where do herons wait?"


def test_the_usage_rows_point_at_the_notebook_and_the_answer(fake_openai, owner, notebook, library):
    fake_openai.chat_replies.append("Herons wait [1].")
    Usage.objects.all().delete()  # the sources' embeddings

    *_, answer = stream_answer(user=owner, notebook=notebook, question="Where do herons wait?")

    chat = Usage.objects.get(kind="chat")
    assert (chat.notebook_id, chat.message_id) == (notebook.pk, answer.message.pk)
    assert chat.output_tokens == 3  # the fake counts words: "Herons", "wait", "1"
    assert set(Usage.objects.values_list("message_id", flat=True)) == {answer.message.pk}


def test_a_refusal_comes_whole_without_a_model_call(fake_openai, owner, notebook):
    items = list(stream_answer(user=owner, notebook=notebook, question="Where do herons wait?"))

    assert items[0] == prompts.EMPTY_NOTEBOOK_REPLY
    assert items[1].message.mode == Message.Mode.REFUSAL
    assert fake_openai.requests == []


def test_stopping_mid_stream_stores_nothing_but_the_usage(fake_openai, owner, notebook, library):
    fake_openai.chat_replies.append("Herons wait motionless at the edge of the pond [1].")
    fake_openai.stream_delay = 0.05
    answers = stream_answer(user=owner, notebook=notebook, question="Where do herons wait?")

    assert isinstance(next(answers), Evidence)
    assert next(answers) == "Herons"
    answers.close()

    assert not Message.objects.exists()
    chat = Usage.objects.get(kind="chat")
    assert chat.notebook_id == notebook.pk and chat.message_id is None
    assert chat.output_tokens > 0


def test_an_empty_question_is_refused_before_anything_streams(owner, notebook):
    with pytest.raises(UserFacingError, match="empty"):
        next(stream_answer(user=owner, notebook=notebook, question="  "))
