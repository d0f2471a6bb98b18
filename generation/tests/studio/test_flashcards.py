"""Flashcards, the seventh kind: a term or question on the front, the answer on the back
with its citation; written by the chat model from its JSON schema, or offline from the
sources' definitions; made from the page and from `manage.py generate`."""

import json

import pytest
from django.core.management import call_command
from django.urls import reverse

from generation.documents.kinds import flashcards
from generation.documents.models import GeneratedDocument
from generation.documents.structured import InvalidOutput, parse
from generation.tests.studio.conftest import reply

CARDS = {
    "title": "Herons and trains",
    "cards": [
        {"front": "Heronry", "back": "A colony where herons breed, often in tall trees [2]."},
        {"front": "When was the sleeper service bought?", "back": "In 2016 [3]."},
    ],
}

GLOSSARY = b"""# Glossary of birds

A heronry is a colony of breeding herons in tall trees.
The grey heron is a wading bird of rivers, lakes and coasts.
Young herons that have just left the nest are called fledglings.
"""


def test_flashcards_are_written_by_the_chat_model_and_shown_with_their_citations(
    fake_openai, client, owner, notebook, studio_sources, make_document
):
    fake_openai.chat_replies.append(reply(CARDS))

    document = make_document("flashcards")
    client.force_login(owner)
    page = client.get(reverse("studio:document", args=[notebook.pk, document.pk])).content.decode()

    assert document.status == GeneratedDocument.Status.READY, document.error
    assert document.mode == GeneratedDocument.Mode.LLM
    request = fake_openai.chat_requests[-1].body
    assert request["response_format"]["json_schema"]["schema"] == flashcards.SCHEMA
    assert [card["front"] for card in document.data["cards"]] == [
        "Heronry",
        "When was the sleeper service bought?",
    ]
    assert '<summary class="flashcard-front">Heronry</summary>' in page
    for cited in document.citations.all():  # each back's [n] opens its passage
        assert reverse("studio:citation", args=[notebook.pk, document.pk, cited.pk]) in page


@pytest.mark.parametrize(
    ("card", "error"),
    [
        ({"front": "Heronry"}, "'back' is a required property"),
        ({"front": "Heronry", "back": "A colony of herons."}, "card 1's back cites no passage"),
    ],
)
def test_a_card_without_a_back_or_a_citation_is_refused(card, error):
    text = json.dumps({"title": "T", "cards": [card]})

    with pytest.raises(InvalidOutput, match=error):
        parse(text, flashcards.SCHEMA, lambda data: flashcards.check(data, 3))


@pytest.mark.django_db(transaction=True)
def test_generate_makes_flashcards_from_the_command_line(
    fake_openai, capsys, owner, notebook, studio_sources
):
    fake_openai.chat_replies.append(reply(CARDS))

    call_command(
        "generate", "--user", "owner", "--notebook", "Research", "--kind", "flashcards", "--json"
    )

    result = json.loads(capsys.readouterr().out)
    assert result["kind"] == "flashcards" and result["status"] == "ready"
    assert result["content"]["cards"][0]["front"] == "Heronry"


def test_the_studio_offers_flashcards_with_a_chat_model(fake_openai, client, owner, notebook):
    client.force_login(owner)

    page = client.get(reverse("notebooks:detail", args=[notebook.pk])).content.decode()

    assert '<option value="flashcards">Flashcards</option>' in page
