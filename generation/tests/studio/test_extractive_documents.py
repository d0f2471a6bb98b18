"""Without a chat model each kind is made from the sources' own sentences and figures,
labelled extractive, with citations; audio is spoken by the local engine."""

import xml.etree.ElementTree as ET

import pytest

from billing.models import Usage
from generation.documents.models import GeneratedDocument
from generation.documents.services import document_svg
from library.models import Source


@pytest.fixture
def offline(fake_openai, settings):
    """Embeddings from the test server, but no chat model: the offline generators run."""
    settings.CHAT_MODEL = ""
    return fake_openai


@pytest.mark.parametrize(
    "kind", ["report", "quiz", "table", "mindmap", "infographic", "flashcards"]
)
def test_each_kind_is_made_extractively_without_a_chat_model(
    offline, studio_sources, make_document, kind
):
    document = make_document(kind)

    assert document.status == GeneratedDocument.Status.READY, document.error
    assert document.mode == GeneratedDocument.Mode.EXTRACTIVE
    assert not offline.chat_requests
    assert not Usage.objects.filter(kind="chat").exists()
    assert document.source.status == Source.Status.READY
    if kind != "mindmap":
        assert document.citations.exists()


def test_the_extractive_report_quotes_key_sentences_of_each_source(
    offline, studio_sources, make_document
):
    document = make_document("report")

    markdown = document.data["markdown"]
    assert "## herons" in markdown and "## trains" in markdown
    for cited in document.citations.all():
        assert cited.supported  # each sentence is its passage's own
    assert "[1]" in markdown


def test_the_extractive_table_lists_figures_and_dates_with_their_sentences(
    offline, studio_sources, make_document
):
    document = make_document("table")

    values = [row["cells"][0] for row in document.data["rows"]]
    assert "25 %" in values
    assert "about 95 cm" in values
    assert "1.4 million" in values
    assert "2019" in values
    row = document.data["rows"][values.index("about 95 cm")]
    assert "stands about 95 cm tall" in row["cells"][1]
    # A row's [n] is checked against what the row says (its cells), not the bare marker.
    assert all(cited.supported for cited in document.citations.all())


def test_the_extractive_quiz_blanks_out_a_term_of_each_key_sentence(
    offline, studio_sources, make_document
):
    document = make_document("quiz")

    questions = document.data["questions"]
    assert len(questions) >= 4
    for item in questions:
        assert "_____" in item["question"]
        answer = (
            item["options"][item["answer_index"]]
            if item["type"] == "multiple_choice"
            else item["answer"]
        )
        assert answer in item["explanation"]  # the quoted sentence holds the blanked term


def test_the_extractive_mind_map_uses_the_sources_headings(offline, studio_sources, make_document):
    document = make_document("mindmap")

    branches = {
        branch["label"]: [child["label"] for child in branch["children"]]
        for branch in document.data["root"]["children"]
    }
    # Each file's one top heading is its title; its sections are the branch's children.
    assert branches == {"Grey herons": ["Breeding"], "Night trains": ["Comfort"]}
    ET.fromstring(document_svg(document=document))


def test_the_extractive_infographic_has_figures_and_a_timeline_in_order(
    offline, studio_sources, make_document
):
    document = make_document("infographic")

    years = [event["date"] for event in document.data["timeline"]]
    assert years == sorted(years)
    assert "2019" in years
    assert document.data["figures"][0]["value"] == "25 %"  # a per cent leads
    ET.fromstring(document_svg(document=document))


def test_an_extractive_document_of_sources_with_nothing_to_use_fails_with_a_message(
    offline, settings, notebook, add_ready_source, make_document
):
    add_ready_source(notebook, b"ok ok ok", "tiny.txt")

    document = make_document("quiz")

    assert document.status == GeneratedDocument.Status.FAILED
    assert "too little for an extractive Quiz" in document.error
    assert "CHAT_MODEL" in document.error
