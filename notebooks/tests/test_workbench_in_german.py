"""The workbench speaks German to a German browser: the source choice, the notes, the chat
style and the reason asking is off."""

from __future__ import annotations

from django.urls import reverse

from notebooks.services import create_note, save_answer_as_note
from notebooks.tests.factories import make_cited_answer, make_source
from retrieval.chosen_sources import choose_sources

DE = {"Accept-Language": "de"}


def test_the_notebook_page_shows_the_workbench_in_german(client, owner, notebook):
    source = make_source(owner=owner, notebook=notebook, title="Otter")
    make_source(owner=owner, notebook=notebook, title="Reiher")
    save_answer_as_note(
        user=owner, message=make_cited_answer(notebook=notebook, source=source).message
    )
    create_note(user=owner, notebook=notebook, content="Eigene Gedanken")
    choose_sources(user=owner, notebook=notebook, ticked=[source.pk])
    client.force_login(owner)

    page = client.get(reverse("notebooks:detail", args=[notebook.pk]), headers=DE).text

    for german in [
        "1 von 2 Quellen",
        "Verwenden:",
        "Notizen",
        "Notiz schreiben",
        "gespeicherte Antwort",
        "Als Quelle verwenden",
        "Als Notiz speichern",
        "Chat-Stil",
        "Lernbegleiter: erklären, dann zurückfragen",
        "Antwortlänge",
    ]:
        assert german in page, german

    choose_sources(user=owner, notebook=notebook, ticked=[])
    page = client.get(reverse("notebooks:detail", args=[notebook.pk]), headers=DE).text
    assert "Keine Quelle ist angehakt" in page


def test_a_refused_note_says_why_in_german(client, owner, notebook):
    client.force_login(owner)

    response = client.post(
        reverse("notebooks:new_note", args=[notebook.pk]),
        {"content": " "},
        headers={**DE, "HX-Request": "true"},
    )

    assert "Eine Notiz braucht etwas Text." in response.text
