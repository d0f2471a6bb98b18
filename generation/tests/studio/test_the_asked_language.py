"""The language asked for is the language written: a model's document in another language is
repaired once, then fails saying so; a German document of English sources keeps the markers
the model gave (words cannot show support across languages); without a chat model the
studio says before it is made that the pick cannot be honoured, and the page says it after."""

import json

import pytest
from django.core.management import call_command
from django.urls import reverse

from generation.documents.models import GeneratedDocument
from generation.tests.studio.conftest import reply

ENGLISH = {
    "title": "Herons and night trains",
    "markdown": "## Herons\n\nGrey herons live along rivers, lakes and coasts across Europe "
    "and Asia [1]. The population in Britain grew by a quarter between 1990 and 2020 [1]. "
    "They breed in colonies called heronries, often high in tall trees [3].\n\n## Trains\n\n"
    "The night train from Vienna to Hamburg leaves at a quarter past eight in the evening [5].",
}
GERMAN = {
    "title": "Reiher und Nachtzüge",
    "markdown": "## Reiher\n\nGraureiher leben an Flüssen, Seen und Küsten in Europa und "
    "Asien [1]. Ihr Bestand in Großbritannien wuchs zwischen 1990 und 2020 um ein Viertel "
    "[1]. Sie brüten in Kolonien, oft hoch oben in Bäumen [3].\n\n## Züge\n\nDer Nachtzug "
    "von Wien nach Hamburg fährt am Abend um Viertel nach acht ab [5].",
}


def test_a_reply_in_english_when_german_was_asked_is_repaired_into_german(
    fake_openai, studio_sources, make_document
):
    fake_openai.chat_replies += [reply(ENGLISH), reply(GERMAN)]

    document = make_document("report", language="de")

    assert document.status == GeneratedDocument.Status.READY, document.error
    first, second = fake_openai.chat_requests
    assert (
        "Write in German: every field, the title and headings too"
        in (first.body["messages"][0]["content"])
    )
    assert "it is written in English, not in German" in second.body["messages"][-1]["content"]
    assert document.language == "de" and document.title == "Reiher und Nachtzüge"
    # German claims about English passages: kept on the model's markers, none left out.
    assert document.unsupported_dropped == 0
    assert "Graureiher leben an Flüssen" in document.data["markdown"]
    assert document.citations.count() == 3


def test_a_model_that_keeps_writing_english_fails_the_german_document_saying_so(
    fake_openai, studio_sources, make_document
):
    fake_openai.chat_replies += [reply(ENGLISH), reply(ENGLISH)]

    document = make_document("report", language="de")

    assert document.status == GeneratedDocument.Status.FAILED
    assert "written in English, not in German" in document.error


@pytest.fixture
def offline(fake_openai, settings):
    settings.CHAT_MODEL = ""
    return fake_openai


def test_offline_a_german_pick_on_english_sources_stays_english_and_says_so(
    client, offline, owner, notebook, studio_sources, make_document
):
    client.force_login(owner)
    panel = client.get(reverse("notebooks:detail", args=[notebook.pk])).content.decode()
    assert "the language picked here cannot be honoured" in panel

    document = make_document("report", language="de")

    assert document.status == GeneratedDocument.Status.READY, document.error
    assert document.language == "en"
    assert document.title == "Report: Research"  # no German frame around English sentences
    page = client.get(reverse("studio:document", args=[notebook.pk, document.pk])).content.decode()
    assert "You asked for it in “de”: without a chat model it quotes the sources" in page


def test_with_a_chat_model_the_panel_promises_nothing_about_language(
    client, fake_openai, owner, notebook
):
    client.force_login(owner)
    panel = client.get(reverse("notebooks:detail", args=[notebook.pk])).content.decode()

    assert "cannot be honoured" not in panel


@pytest.mark.django_db(transaction=True)
def test_generate_says_before_making_it_that_the_language_cannot_be_honoured(
    offline, capsys, owner, notebook, studio_sources
):
    call_command(
        "generate", "--user", "owner", "--notebook", "Research", "--kind", "report",
        "--language", "de", "--json",
    )  # fmt: skip

    out, err = capsys.readouterr()
    assert "--language de cannot be honoured" in err
    assert json.loads(out)["status"] == "ready"
