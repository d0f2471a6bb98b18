"""Without a chat model the studio makes what reads well from the sources' own words: a
report of key sentences and a mind map of the outline, labelled extractive, with citations.
The kinds that would be sentence fragments (a quiz, flashcards, a table, an infographic, an
audio overview) are refused, saying why."""

import re
import xml.etree.ElementTree as ET

import pytest
from django.utils import translation

from billing.models import Usage
from generation.documents.models import GeneratedDocument, kind_name
from generation.documents.services import document_svg, generate_document, request_document
from library.models import Source
from texts import shown
from texts.errors import UserFacingError


@pytest.fixture
def offline(fake_openai, settings):
    """Embeddings from the test server, but no chat model: the offline generators run."""
    settings.CHAT_MODEL = ""
    return fake_openai


@pytest.mark.parametrize("kind", ["report", "mindmap"])
def test_a_report_and_a_mind_map_are_made_extractively_without_a_chat_model(
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


def test_the_extractive_mind_map_uses_the_sources_headings(offline, studio_sources, make_document):
    document = make_document("mindmap")

    branches = {
        branch["label"]: [child["label"] for child in branch["children"]]
        for branch in document.data["root"]["children"]
    }
    # Each file's one top heading is its title; its sections are the branch's children.
    assert branches == {"Grey herons": ["Breeding"], "Night trains": ["Comfort"]}
    ET.fromstring(document_svg(document=document))


def test_an_extractive_document_of_sources_with_nothing_to_use_fails_with_a_message(
    offline, settings, notebook, add_ready_source, make_document
):
    add_ready_source(notebook, b"ok ok ok", "tiny.txt")

    document = make_document("report")

    assert document.status == GeneratedDocument.Status.FAILED
    assert "too little for an extractive report" in document.error
    assert "CHAT_MODEL" in document.error


def test_a_failed_documents_message_names_its_kind_in_the_readers_language(
    offline, settings, notebook, add_ready_source, make_document
):
    add_ready_source(notebook, b"ok ok ok", "tiny.txt")

    document = make_document("slides")

    assert document.status == GeneratedDocument.Status.FAILED
    assert "too little for an extractive slide deck" in document.error
    with translation.override("de"):
        german = shown(document.error, document.error_i18n)
    assert "„Foliensatz“" in german


def test_every_kind_has_a_name_to_be_named_by_in_a_sentence():
    with translation.override("de"):
        names = {kind_name(kind).translated() for kind in GeneratedDocument.Kind}

    assert len(names) == len(GeneratedDocument.Kind)


@pytest.mark.parametrize("kind", ["quiz", "table", "infographic", "flashcards", "audio"])
def test_the_kinds_that_would_be_sentence_fragments_are_refused_without_a_chat_model(
    offline, owner, notebook, studio_sources, kind
):
    with pytest.raises(UserFacingError, match="needs a chat model") as refused:
        request_document(user=owner, notebook=notebook, kind=kind)

    assert "OPENAI_BASE_URL" in str(refused.value)
    assert not GeneratedDocument.objects.exists()


def test_a_quiz_queued_while_a_model_was_there_fails_saying_it_needs_one(
    offline, settings, owner, notebook, studio_sources
):
    settings.CHAT_MODEL = "test-model"
    document = request_document(user=owner, notebook=notebook, kind="quiz")
    settings.CHAT_MODEL = ""

    generate_document(document_id=document.pk)

    document.refresh_from_db()
    assert document.status == GeneratedDocument.Status.FAILED
    assert "Making this quiz needs a chat model" in document.error
    assert not offline.chat_requests


def test_without_a_model_the_studio_offers_only_what_it_makes_well_and_says_why(
    offline, client, owner, notebook
):
    client.force_login(owner)

    page = client.get(f"/notebooks/{notebook.pk}/").content.decode()

    offered = re.findall(
        r'<option value="(\w+)">', page.split('id="studio-kind"')[1].split("</select>")[0]
    )
    assert offered == ["report", "mindmap", "slides", "video"]
    assert "need a chat model" in page and "Quiz" in page.split("studio-model-free")[1]
