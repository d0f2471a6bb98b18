"""Generated documents in a notebook's search (docs/retrieval.md): uploads fill the slots
first; chunks of generated documents take at most RETRIEVAL_GENERATED_SLOTS of the k, only
at or above the floor; "Ask about this" on a generated document is not capped."""

from __future__ import annotations

from library.models import Chunk, Source
from retrieval.services import retrieve
from retrieval.tests.chunks import MODES, add_chunks, make_source, search, texts


@MODES
def test_generated_chunks_take_at_most_two_slots_after_the_uploads(notebook, mode):
    add_chunks(make_source(notebook, title="upload"), [0.9, 0.8, 0.7, 0.6, 0.5, 0.45, 0.42])
    report = make_source(notebook, kind=Source.Kind.GENERATED, title="report")
    # The report restates the uploads and matches better than any of them.
    add_chunks(report, [0.99, 0.98, 0.97, 0.96])

    hits = search(mode, notebook, k=8, floor=0.4)

    # The two best of the report's chunks take two slots; the uploads fill the other six,
    # best first, ahead of the report's.
    assert texts(hits) == [
        "upload 0",
        "upload 1",
        "upload 2",
        "upload 3",
        "upload 4",
        "upload 5",
        "report 0",
        "report 1",
    ]


@MODES
def test_generated_chunks_fill_no_slot_below_the_floor(notebook, mode):
    add_chunks(make_source(notebook, title="upload"), [0.9, 0.8])
    quiz = make_source(notebook, kind=Source.Kind.GENERATED, title="quiz")
    # Shares the question's word, so hybrid's full-text side finds it; still below the floor.
    add_chunks(quiz, [0.35, 0.2], text="{title} {n} about herons")

    hits = search(mode, notebook, k=8, floor=0.5)

    assert texts(hits) == ["upload 0", "upload 1"]


def test_an_upload_sharing_the_questions_words_may_still_enter_below_the_floor_in_hybrid(
    notebook,
):
    # The floor held to generated chunks leaves hybrid's rule for uploads as it was.
    herons = "{title} {n} herons"
    add_chunks(make_source(notebook, title="upload"), [0.9, 0.2], text=herons)
    add_chunks(make_source(notebook, kind=Source.Kind.GENERATED, title="map"), [0.2], text=herons)

    hits = search("hybrid", notebook, k=8, floor=0.5)

    assert texts(hits) == ["upload 0 herons", "upload 1 herons"]


@MODES
def test_with_fewer_generated_chunks_than_slots_the_rest_go_to_uploads(notebook, mode):
    add_chunks(make_source(notebook, title="upload"), [0.9, 0.8, 0.7, 0.6])
    add_chunks(make_source(notebook, kind=Source.Kind.GENERATED, title="table"), [0.95])

    hits = search(mode, notebook, k=4, floor=0.3)

    assert texts(hits) == ["upload 0", "upload 1", "upload 2", "table 0"]


@MODES
def test_the_slot_count_is_a_setting(settings, notebook, mode):
    settings.RETRIEVAL_GENERATED_SLOTS = 0
    add_chunks(make_source(notebook, title="upload"), [0.5])
    add_chunks(make_source(notebook, kind=Source.Kind.GENERATED, title="report"), [0.99])

    assert texts(search(mode, notebook, k=8, floor=0.3)) == ["upload 0"]


@MODES
def test_asking_about_a_generated_document_is_not_capped(
    fake_openai, settings, owner, notebook, mode
):
    settings.RETRIEVAL_MODE = mode
    settings.SIMILARITY_FLOOR = 0.99  # no floor applies to one source
    add_chunks(make_source(notebook, title="upload"), [0.9])
    report = make_source(notebook, kind=Source.Kind.GENERATED, title="report")
    # fake-embed vectors have 64 dimensions; make the report's match that.
    add_chunks(report, [0.5] * 14)
    Chunk.objects.filter(source=report).update(embedding=[0.5] * 64)

    hits = retrieve(user=owner, notebook=notebook, question="herons", source=report)

    assert len(hits) == 12
    assert {hit.chunk.source_id for hit in hits} == {report.pk}
