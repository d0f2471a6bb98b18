"""manage.py notes: a person's readable notes in a notebook, with their citations, and the
notebook's sources with which are ticked for them, as text or JSON."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from notebooks.models import Note
from notebooks.services import create_note, save_answer_as_note
from notebooks.tests.factories import make_cited_answer, make_source
from retrieval.chosen_sources import choose_sources
from sharing.models import Membership


def test_notes_json_lists_notes_with_citations_and_ticked_sources(capsys, owner, notebook):
    source = make_source(owner=owner, notebook=notebook, title="Otter facts")
    other = make_source(owner=owner, notebook=notebook, title="Other")
    cited = make_cited_answer(notebook=notebook, source=source)
    saved = save_answer_as_note(user=owner, message=cited.message)
    create_note(user=owner, notebook=notebook, content="My own *thoughts*", title="Mine")
    choose_sources(user=owner, notebook=notebook, ticked=[source.pk])

    call_command("notes", "--user", "owner", "--notebook", "Research", "--json")

    result = json.loads(capsys.readouterr().out)
    assert [(s["id"], s["ticked"]) for s in result["sources"]] == [
        (other.pk, False),
        (source.pk, True),
    ]
    by_title = {note["title"]: note for note in result["notes"]}
    assert by_title["Mine"]["content"] == "My own *thoughts*"
    assert by_title["Why?"]["id"] == saved.pk
    assert by_title["Why?"]["citations"] == [
        {
            "n": 1,
            "source_id": source.pk,
            "source": "Otter facts",
            "page": 4,
            "quote": "Sea otters hold hands while they sleep.",
        }
    ]


def test_notes_shows_another_persons_note_only_once_posted(capsys, owner, notebook):
    member = get_user_model().objects.create_user(username="vi", password="vi-pass-123")
    Membership.objects.create(notebook=notebook, user=member, role="viewer")
    note = create_note(user=owner, notebook=notebook, content="Private thought")

    call_command("notes", "--user", "vi", "--notebook", "Research")
    assert "Private thought" not in capsys.readouterr().out

    Note.objects.filter(pk=note.pk).update(posted=True)
    call_command("notes", "--user", "vi", "--notebook", "Research")
    out = capsys.readouterr().out
    assert "Private thought" in out and "owner, posted" in out


def test_notes_refuses_a_notebook_the_user_cannot_read(outsider, notebook):
    with pytest.raises(CommandError, match="outsider has no notebook 'Research'"):
        call_command("notes", "--user", "outsider", "--notebook", "Research")
