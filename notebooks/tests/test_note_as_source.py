"""A note made a source of its notebook (kind "note"): chunked, embedded, searched and cited
like an upload, without the note's own [n] markers; made a note only again, its source goes
and answers that cited it say "source removed"."""

from __future__ import annotations

import pytest
from django.urls import reverse

from generation.answering import answer_question
from ingest.notes import edit_note, make_note_a_source
from ingest.services import process_source
from library.models import Chunk, Source
from notebooks.models import Note
from notebooks.services import create_note, make_note_a_note_again
from retrieval.services import retrieve

TEXT = "# Kingfishers\n\nKingfishers dive into the river to catch small fish [1]."


@pytest.fixture
def note(fake_openai, owner, notebook):
    return create_note(user=owner, notebook=notebook, content=TEXT, title="Kingfisher notes")


def made_source(note: Note) -> Source:
    source = make_note_a_source(note=note)
    return process_source(source_id=source.pk)


def test_a_note_made_a_source_is_chunked_embedded_and_searched(owner, notebook, note):
    source = made_source(note)

    assert (source.kind, source.status, source.title) == ("note", "ready", "Kingfisher notes")
    assert notebook.sources.filter(pk=source.pk).exists()
    text = " ".join(Chunk.objects.filter(source=source).values_list("text", flat=True))
    assert "Kingfishers dive into the river" in text
    assert "[1]" not in text  # the note's markers point at its own citations
    hits = retrieve(user=owner, notebook=notebook, question="What do kingfishers catch?")
    assert {hit.chunk.source_id for hit in hits} == {source.pk}


def test_an_answer_cites_the_note_like_an_upload(fake_openai, owner, notebook, note):
    source = made_source(note)
    fake_openai.chat_replies.append("They catch small fish [1].")

    answer = answer_question(user=owner, notebook=notebook, question="What do kingfishers eat?")

    assert [cited.source_id for cited in answer.citations] == [source.pk]


def test_a_note_made_a_note_again_leaves_the_sources_and_its_citations_say_removed(
    client, fake_openai, owner, notebook, note
):
    source = made_source(note)
    fake_openai.chat_replies.append("They catch small fish [1].")
    answer = answer_question(user=owner, notebook=notebook, question="What do kingfishers eat?")

    make_note_a_note_again(note=note)

    assert not Source.objects.filter(pk=source.pk).exists()
    assert Note.objects.get(pk=note.pk).source_id is None
    client.force_login(owner)
    passage = client.get(
        reverse("notebooks:citation", args=[notebook.pk, answer.citations[0].pk]),
        HTTP_HX_REQUEST="true",
    )
    assert "Source removed" in passage.text


def test_editing_a_note_that_is_a_source_reads_its_new_text(owner, notebook, note):
    old = made_source(note)

    edit_note(note=note, content="Herons wait motionless by the pond.", title="")

    note.refresh_from_db()
    assert not Source.objects.filter(pk=old.pk).exists()
    new = process_source(source_id=note.source_id)
    assert "Herons wait" in new.chunks.get().text


def test_the_note_source_view_makes_it_a_source_and_back(client, owner, notebook, note):
    client.force_login(owner)
    url = reverse("notebooks:note_source", args=[notebook.pk, note.pk])

    response = client.post(url, {"source": "1"}, HTTP_HX_REQUEST="true")

    note.refresh_from_db()
    assert note.source.kind == "note" and note.source.status == "queued"
    assert 'hx-swap-oob="true"' in response.text  # the sources list shows it too
    assert "every 2s" in response.text  # and the notes poll until it is ready

    client.post(url, {"source": "0"}, HTTP_HX_REQUEST="true")
    note.refresh_from_db()
    assert note.source is None


def test_a_note_source_cannot_be_removed_as_an_upload_is(client, owner, notebook, note):
    source = made_source(note)
    client.force_login(owner)

    response = client.post(reverse("notebooks:remove_source", args=[notebook.pk, source.pk]))

    assert response.status_code == 404
    assert notebook.sources.filter(pk=source.pk).exists()


def test_deleting_a_note_that_is_a_source_deletes_its_source(client, owner, notebook, note):
    source = made_source(note)
    client.force_login(owner)

    client.post(reverse("notebooks:delete_note", args=[notebook.pk, note.pk]))

    assert not Source.objects.filter(pk=source.pk).exists()


def test_a_note_source_is_never_offered_to_the_public_library(owner, notebook, note):
    from sharing import access

    owner.is_staff = True
    source = made_source(note)

    assert not access.publishable_sources(owner).filter(pk=source.pk).exists()
