import pytest
from django.db import connection

from generation.answering import Answer, stream_answer
from generation.tests.passages import HERONS
from notebooks.models import Message


# Not inside a test transaction: outside one, the answer may give its connection back.
@pytest.mark.django_db(transaction=True)
def test_a_streamed_answer_holds_no_database_connection_while_the_model_writes(
    fake_openai, owner, notebook, add_ready_source
):
    add_ready_source(notebook, HERONS, "herons.txt")
    fake_openai.chat_replies.append("Herons wait motionless at the edge of the pond [1].")
    fake_openai.stream_delay = 0.05
    answers = stream_answer(user=owner, notebook=notebook, question="Where do herons wait?")

    next(answers)  # the passages, sent before the model writes
    assert next(answers) == "Herons"
    # The model is still writing (one chunk sent of eleven) and no connection is held.
    assert fake_openai.chunks_sent < 5
    assert connection.connection is None

    *deltas, answer = answers
    assert isinstance(answer, Answer)  # the end of the answer took a connection again
    assert answer.message.content == "Herons wait motionless at the edge of the pond [1]."
    assert Message.objects.filter(conversation=answer.conversation).count() == 2
