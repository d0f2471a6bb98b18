"""Searching only the sources a person ticked: the ids go into the one statement's scope,
so the k slots are filled from the chosen sources, never cut down from a search of all of
them; and a note made a source takes the generated-slot rule."""

from __future__ import annotations

import pytest

from library.models import Source
from retrieval.tests.chunks import MODES, add_chunks, make_source, search, texts


@MODES
def test_only_the_chosen_sources_are_searched_and_they_fill_every_slot(notebook, mode):
    # The unchosen source matches better than anything in the chosen one: a filter applied
    # after the search would have thrown its k hits away and kept nothing.
    chosen = make_source(notebook, title="chosen")
    add_chunks(chosen, [0.6, 0.55, 0.5, 0.45])
    add_chunks(make_source(notebook, title="other"), [0.99, 0.98, 0.97, 0.96])

    hits = search(mode, notebook, k=3, floor=0.0, sources=[chosen.pk])

    assert texts(hits) == ["chosen 0", "chosen 1", "chosen 2"]


@MODES
def test_no_choice_searches_every_source(notebook, mode):
    add_chunks(make_source(notebook, title="one"), [0.9])
    add_chunks(make_source(notebook, title="two"), [0.8])

    assert texts(search(mode, notebook, k=4, floor=0.0, sources=None)) == ["one 0", "two 0"]


@MODES
def test_an_empty_choice_finds_nothing(notebook, mode):
    add_chunks(make_source(notebook, title="one"), [0.9])

    assert search(mode, notebook, k=4, floor=0.0, sources=[]) == []


@MODES
def test_choosing_a_source_of_another_notebook_finds_nothing_of_it(notebook, owner, mode):
    from notebooks.models import Notebook

    elsewhere = Notebook.objects.create(owner=owner, title="Elsewhere")
    foreign = make_source(elsewhere, title="foreign")
    add_chunks(foreign, [0.99])
    add_chunks(make_source(notebook, title="mine"), [0.5])

    assert search(mode, notebook, k=4, floor=0.0, sources=[foreign.pk]) == []


@MODES
def test_a_note_made_a_source_takes_the_generated_slot_rule(settings, notebook, mode):
    settings.RETRIEVAL_GENERATED_SLOTS = 1
    add_chunks(make_source(notebook, title="upload"), [0.7, 0.6, 0.5])
    # The note restates the upload and matches better; it still gets one slot, after it.
    add_chunks(make_source(notebook, kind=Source.Kind.NOTE, title="note"), [0.99, 0.98])

    hits = search(mode, notebook, k=3, floor=0.3)

    assert texts(hits) == ["upload 0", "upload 1", "note 0"]


@pytest.mark.parametrize("mode", ["dense", "hybrid"])
def test_a_note_asked_about_alone_is_not_capped(settings, notebook, mode):
    settings.RETRIEVAL_GENERATED_SLOTS = 1
    note = make_source(notebook, kind=Source.Kind.NOTE, title="note")
    add_chunks(note, [0.9, 0.8, 0.7])

    hits = search(mode, notebook, k=3, floor=0.0, source_id=note.pk)

    assert texts(hits) == ["note 0", "note 1", "note 2"]
