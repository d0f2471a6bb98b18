"""A ready document is a source of kind "generated": "Ask about this" searches it alone
(k = 12, no floor); in a notebook-wide question its chunks take at most 2 of the k slots,
and only above the floor (retrieval/search.py, the retrieval helper's rule)."""

import pytest

from generation.answering import answer_question
from generation.tests.studio.conftest import reply
from library.models import Source
from retrieval.services import retrieve

LONG_REPORT = {
    "title": "All about herons",
    "markdown": "\n\n".join(
        f"Grey herons nest in heronries, often high in tall trees, point {i} [1]."
        for i in range(30)
    ),
}


@pytest.fixture
def report(fake_openai, studio_sources, make_document):
    fake_openai.chat_replies.append(reply(LONG_REPORT))
    document = make_document("report")
    assert document.source.status == Source.Status.READY, document.source.error
    assert document.source.chunks.count() > 12
    return document


def test_asking_about_a_generated_document_searches_it_alone_without_a_floor(
    settings, owner, notebook, report
):
    settings.SIMILARITY_FLOOR = 0.99

    hits = retrieve(user=owner, notebook=notebook, question="night trains", source=report.source)

    assert len(hits) == 12
    assert {hit.chunk.source_id for hit in hits} == {report.source_id}


def test_ask_about_this_answers_from_the_generated_document(fake_openai, owner, notebook, report):
    fake_openai.chat_replies.append("Herons nest in heronries [1].")

    answer = answer_question(
        user=owner, notebook=notebook, question="Where do herons nest?", source=report.source
    )

    assert {cited.source_id for cited in answer.citations} == {report.source_id}


@pytest.mark.parametrize("mode", ["dense", "hybrid"])
def test_generated_chunks_take_at_most_two_slots_and_only_above_the_floor(
    settings, owner, notebook, studio_sources, report, mode
):
    settings.RETRIEVAL_MODE = mode
    settings.RETRIEVAL_K = 12
    uploads = sum(source.chunks.count() for source in studio_sources)
    assert uploads < 10  # leaves slots that generated chunks would fill without the cap

    hits = retrieve(user=owner, notebook=notebook, question="grey herons nest in heronries")
    generated = [hit for hit in hits if hit.chunk.source_id == report.source_id]

    assert len(generated) == 2
    assert len(hits) == uploads + 2

    settings.SIMILARITY_FLOOR = 0.99
    hits = retrieve(user=owner, notebook=notebook, question="grey herons nest in heronries")
    assert all(hit.chunk.source_id != report.source_id for hit in hits)
