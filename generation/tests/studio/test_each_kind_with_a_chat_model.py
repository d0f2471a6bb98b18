"""Each kind end to end against the test OpenAI server: the model's JSON becomes a ready
document with citations to the retrieved chunks, indexed as a searchable generated source."""

import pytest

from billing.models import Usage
from generation.documents.models import GeneratedDocument
from generation.tests.studio.conftest import REPLIES, reply
from library.models import Source


@pytest.mark.parametrize("kind", list(REPLIES))
def test_a_chat_model_writes_each_kind_as_valid_json_with_citations(
    fake_openai, owner, notebook, studio_sources, make_document, kind
):
    fake_openai.chat_replies.append(reply(REPLIES[kind]))

    document = make_document(kind)

    assert document.status == GeneratedDocument.Status.READY, document.error
    assert document.mode == GeneratedDocument.Mode.LLM
    assert document.model == "fake-chat"
    assert document.title == REPLIES[kind]["title"]
    [request] = fake_openai.chat_requests
    assert request.body["response_format"]["type"] == "json_schema"
    assert request.body["response_format"]["json_schema"]["name"] == kind
    # The citations point at chunks of the user's own sources.
    citations = list(document.citations.all())
    if kind != "mindmap":
        assert citations
        assert all(cited.chunk.source in studio_sources for cited in citations)
        assert [cited.n for cited in citations] == list(range(1, len(citations) + 1))
    # Indexed: a ready source of kind "generated" in the notebook, with chunks.
    source = document.source
    assert source.kind == Source.Kind.GENERATED
    assert source.status == Source.Status.READY, source.error
    assert source.chunks.exists()
    assert notebook.sources.filter(pk=source.pk).exists()
    assert document.stage == ""
    assert Usage.objects.filter(kind="chat", notebook=notebook).count() == 1


def test_a_report_marker_that_names_no_passage_is_dropped_and_the_rest_renumbered(
    fake_openai, studio_sources, make_document
):
    fake_openai.chat_replies.append(
        reply({"title": "R", "markdown": "Herons nest in trees [3]. Trains run at night [99][1]."})
    )

    document = make_document("report")

    assert document.data["markdown"] == "Herons nest in trees [1]. Trains run at night [2]."
    first, second = document.citations.all()
    passages = fake_openai.chat_requests[0].body["messages"][1]["content"]
    assert f"[3] ({first.source_title}" in passages
    assert f"[1] ({second.source_title}" in passages


def test_a_job_run_again_after_its_worker_died_while_indexing_only_indexes(
    fake_openai, studio_sources, make_document
):
    from generation.documents.services import generate_document

    fake_openai.chat_replies.append(reply(REPLIES["report"]))
    document = make_document("report")
    document.source.delete()  # the worker died after the document was made
    GeneratedDocument.objects.filter(pk=document.pk).update(stage="indexing")
    requests = len(fake_openai.chat_requests)

    generate_document(document_id=document.pk)

    document.refresh_from_db()
    assert document.stage == "" and document.status == "ready"
    assert document.source.status == Source.Status.READY
    assert len(fake_openai.chat_requests) == requests  # not written again
