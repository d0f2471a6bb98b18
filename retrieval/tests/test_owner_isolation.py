"""A search never returns another owner's chunk, not even of the very same bytes."""

from __future__ import annotations

import pytest

from library.models import Chunk, Source
from notebooks.models import Notebook
from retrieval.services import retrieve

SHARED = (
    b"The lighthouse keeper logs every passing ship. Storm warnings are raised at dusk. "
    b"The lamp is trimmed at midnight and the log is signed at dawn."
)


@pytest.fixture
def both_libraries(fake_openai, owner, outsider, notebook, add_ready_source):
    theirs = Notebook.objects.create(owner=outsider, title="Theirs")
    mine = add_ready_source(notebook, SHARED, "lighthouse.txt")
    copy = add_ready_source(theirs, SHARED, "lighthouse.txt")
    return mine, copy, theirs


def test_the_same_bytes_make_one_source_per_owner(both_libraries):
    mine, copy, _ = both_libraries

    assert mine.pk != copy.pk
    assert mine.sha256 == copy.sha256
    assert Chunk.objects.filter(source=mine).count() == Chunk.objects.filter(source=copy).count()


@pytest.mark.parametrize("mode", ["dense", "hybrid"])
def test_searching_a_notebook_returns_only_its_owners_chunks(both_libraries, settings, mode):
    settings.RETRIEVAL_MODE = mode
    mine, copy, theirs = both_libraries

    hits = retrieve(user=theirs.owner, notebook=theirs, question="When is the lamp trimmed?")

    assert hits, "the search found nothing, so it proves nothing"
    assert {hit.chunk.source_id for hit in hits} == {copy.pk}
    assert all(hit.chunk.source.owner_id == theirs.owner_id for hit in hits)


@pytest.mark.parametrize("mode", ["dense", "hybrid"])
def test_asking_about_another_owners_source_finds_nothing(both_libraries, settings, mode):
    settings.RETRIEVAL_MODE = mode
    mine, copy, theirs = both_libraries

    hits = retrieve(
        user=theirs.owner, notebook=theirs, question="When is the lamp trimmed?", source=mine
    )

    assert hits == []


def test_a_source_linked_to_no_notebook_of_the_asker_is_never_searched(
    both_libraries, owner, notebook
):
    mine, copy, theirs = both_libraries
    # The owner's own chunks: found in the owner's notebook, never through the outsider's.
    found = retrieve(user=owner, notebook=notebook, question="When is the lamp trimmed?")

    assert {hit.chunk.source_id for hit in found} == {mine.pk}
    assert Source.objects.filter(notebooksource__notebook=theirs).get() == copy
