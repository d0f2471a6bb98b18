""" "Ask about this": a question about one source searches that source alone, k = 12, no floor."""

import io
import json
import re

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from generation.answering import answer_question
from library.models import Chunk
from notebooks.models import Notebook
from retrieval.services import retrieve
from texts.errors import UserFacingError

HERONS = " ".join(
    f"Heron fact {i}: grey herons wait motionless at the pond number {i}." for i in range(40)
).encode()
TRAINS = b"The night train to Vienna leaves the central station at eleven each evening."


@pytest.fixture
def sources(fake_openai, settings, notebook, add_ready_source):
    settings.CHUNK_TOKENS, settings.CHUNK_OVERLAP_TOKENS = 20, 2
    herons = add_ready_source(notebook, HERONS, "herons.txt")
    trains = add_ready_source(notebook, TRAINS, "trains.txt")
    assert Chunk.objects.filter(source=herons).count() > 12
    return herons, trains


@pytest.mark.parametrize("mode", ["dense", "hybrid"])
def test_a_question_about_one_source_retrieves_only_its_chunks_up_to_12(
    settings, owner, notebook, sources, mode
):
    herons, _ = sources
    settings.RETRIEVAL_MODE = mode
    settings.SIMILARITY_FLOOR = 0.99  # no floor applies to one source

    hits = retrieve(user=owner, notebook=notebook, question="night train to Vienna", source=herons)

    assert len(hits) == 12
    assert {hit.chunk.source_id for hit in hits} == {herons.pk}


def test_the_default_search_is_unchanged(settings, owner, notebook, sources):
    _, trains = sources

    hits = retrieve(user=owner, notebook=notebook, question="night train to Vienna")

    assert len(hits) <= settings.RETRIEVAL_K
    assert trains.pk in {hit.chunk.source_id for hit in hits}


def test_the_answer_cites_only_the_source_asked_about(fake_openai, owner, notebook, sources):
    herons, _ = sources
    fake_openai.chat_replies.append("Herons wait [1].")

    answer = answer_question(
        user=owner, notebook=notebook, question="When does the train leave?", source=herons
    )

    prompt = fake_openai.chat_requests[0].body["messages"][-1]["content"]
    assert "night train" not in prompt
    assert len(re.findall(r"^\[\d+\] \(herons", prompt, flags=re.M)) == 12
    assert {cited.source_id for cited in answer.citations} == {herons.pk}


def test_a_source_outside_the_notebook_is_refused(owner, notebook, sources, add_ready_source):
    other = Notebook.objects.create(owner=owner, title="Other")
    elsewhere = add_ready_source(other, b"Otters hold hands while they sleep.", "otters.txt")

    with pytest.raises(UserFacingError):
        answer_question(user=owner, notebook=notebook, question="Otters?", source=elsewhere)


def test_the_ask_view_limits_the_question_to_the_source(
    client, fake_openai, owner, notebook, sources
):
    herons, _ = sources
    fake_openai.chat_replies.append("Herons wait [1].")
    client.force_login(owner)

    page = client.get(
        reverse("notebooks:new_conversation", args=[notebook.pk]), {"about": herons.pk}
    )
    client.post(
        reverse("notebooks:ask", args=[notebook.pk]),
        {"question": "When does the train leave?", "source": herons.pk},
    )

    assert f'name="source" value="{herons.pk}"' in page.text
    assert "Asking about <strong>herons</strong> only" in page.text
    assert "night train" not in fake_openai.chat_requests[0].body["messages"][-1]["content"]


def test_the_ask_command_takes_a_source(fake_openai, owner, notebook, sources):
    herons, _ = sources
    fake_openai.chat_replies.append("Herons wait [1].")
    out = io.StringIO()

    call_command(
        "ask",
        "When does the train leave?",
        user=owner.username,
        notebook=notebook.title,
        source=herons.pk,
        json=True,
        stdout=out,
    )

    assert {cited["source_id"] for cited in json.loads(out.getvalue())["citations"]} == {herons.pk}
    with pytest.raises(CommandError, match="no source"):
        call_command("ask", "Q?", user=owner.username, notebook=notebook.title, source=10**9)
