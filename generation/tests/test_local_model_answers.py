"""End to end with the real local model path: the smallest packaged model (SmolLM2-135M,
installed by make test) served by llama.cpp as `serve` runs it, answering a question from a
source with a citation the support check verified; then killed, started again, answering."""

from __future__ import annotations

import os
import signal

import pytest

from generation.answering import answer_question, stream_answer
from generation.citations import hollow
from notebooks.models import Message
from providers.local_model import PACKAGED_MODELS, Plan
from providers.local_model_supervisor import LocalModelServer

# Minutes on a busy 2-core machine (the model, the local embeddings and the database share it).
pytestmark = [pytest.mark.local_models, pytest.mark.timeout(600)]

SMALLEST = PACKAGED_MODELS[-1]
TRAINS = (
    b"The night train to Vienna leaves the central station at eleven each evening. "
    b"It arrives in Vienna at seven in the morning."
)


@pytest.fixture
def local_model(settings, tmp_path):
    if not SMALLEST.installed():
        pytest.fail(f"{SMALLEST.name} is not installed: make install-dev installs it")
    plan = Plan(SMALLEST.path(), SMALLEST.chat_model, SMALLEST.description, 2, 2048, "")
    server = LocalModelServer(plan, data_dir=tmp_path)
    server.start()
    try:
        assert server.wait_ready(120), server.state
        for name, value in server.environment().items():
            setattr(settings, name, int(value) if value.isdigit() else value)
        settings.CHAT_ANSWER_TOKENS = 80  # a sentence or two is all the test reads
        settings.CHAT_FIRST_TOKEN_SECONDS = 120.0
        settings.CHAT_IDLE_SECONDS = 30.0
        yield server
    finally:
        server.stop()


def test_the_local_model_answers_with_a_verified_citation(
    local_model, owner, notebook, add_ready_source
):
    add_ready_source(notebook, TRAINS, "trains.txt")

    *deltas, answer = stream_answer(
        user=owner, notebook=notebook, question="When does the night train to Vienna leave?"
    )

    assert deltas, "the answer streamed"
    assert answer.message.mode == Message.Mode.LLM
    assert answer.message.model == SMALLEST.chat_model
    assert not hollow(answer.message.content)
    assert any(citation.supported for citation in answer.citations), answer.message.content


def test_an_answer_after_the_server_was_killed_comes_from_the_restarted_one(
    local_model, owner, notebook, add_ready_source
):
    add_ready_source(notebook, TRAINS, "trains.txt")
    assert local_model.process is not None
    os.kill(local_model.process.pid, signal.SIGKILL)
    local_model.process.wait()

    assert local_model.wait_ready(120)

    answer = answer_question(
        user=owner, notebook=notebook, question="When does the night train arrive in Vienna?"
    )
    assert local_model.restarts == 1
    assert answer.message.mode in {Message.Mode.LLM, Message.Mode.EXTRACTIVE}
    assert not hollow(answer.message.content)
