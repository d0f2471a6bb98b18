"""A source's chunks and vectors written as arrays in one statement each (ingest/chunk_rows.py)."""

from random import Random

import pytest
from django.contrib.postgres.search import SearchVector
from django.db import connection

from ingest.chunk_rows import insert_chunks, write_vectors
from ingest.chunker import ChunkDraft
from library.models import Chunk, Source

DRAFTS = [
    ChunkDraft(
        text="Die Pakete werden mit apt installiert, nicht mit dpkg allein.",
        page=3,
        char_start=0,
        char_end=61,
        section=("2 Paketverwaltung", "2.1 Grundlagen: „apt“ & dpkg"),
        page_label="iii",
    ),
    ChunkDraft(
        text="It's O'Reilly's \\ back-slash; {braces}, \"quotes\".",
        page=None,
        char_start=5,
        char_end=52,
    ),
    ChunkDraft(
        text="Zeile eins\nZeile zwei\tmit Tab", page=4, char_start=0, char_end=29, section=("Ä",)
    ),
]


@pytest.fixture
def source(owner):
    return Source.objects.create(owner=owner, kind="text", title="rows", sha256="a" * 64)


@pytest.mark.django_db
def test_inserted_chunks_keep_every_field_in_order(source):
    insert_chunks(source_id=source.pk, drafts=DRAFTS, embedding_model="m", search_config="german")

    rows = list(Chunk.objects.filter(source=source).order_by("ordinal"))
    assert [row.ordinal for row in rows] == [0, 1, 2]
    for row, draft in zip(rows, DRAFTS, strict=True):
        assert (row.text, row.page, row.page_label, row.char_start, row.char_end) == (
            draft.text,
            draft.page,
            draft.page_label,
            draft.char_start,
            draft.char_end,
        )
        assert row.section == list(draft.section)
        assert row.embedding is None
        assert row.embedding_model == "m"


@pytest.mark.django_db
@pytest.mark.parametrize("config", ["german", "english", "simple"])
def test_full_text_vectors_are_the_ones_search_vector_makes(source, config):
    insert_chunks(source_id=source.pk, drafts=DRAFTS, embedding_model="m", search_config=config)

    rows = Chunk.objects.filter(source=source).annotate(
        expected=SearchVector("text", config=config)
    )
    assert [row.search_vector for row in rows] == [row.expected for row in rows]
    assert all(row.search_vector for row in rows)


@pytest.mark.django_db
def test_vectors_go_only_to_chunks_still_waiting_for_one(source):
    insert_chunks(source_id=source.pk, drafts=DRAFTS, embedding_model="m", search_config="simple")
    first, second, third = Chunk.objects.filter(source=source).order_by("ordinal")
    Chunk.objects.filter(pk=second.pk).update(embedding=[0.5, 0.5, 0.5])
    gone = third.pk
    third.delete()

    written = write_vectors(
        ids=[first.pk, second.pk, gone],
        vectors=[[0.1, 0.2, 0.3], [0.9, 0.9, 0.9], [0.3, 0.2, 0.1]],
        model="n",
    )

    assert written == {first.pk}
    first.refresh_from_db()
    second.refresh_from_db()
    assert list(first.embedding) == pytest.approx([0.1, 0.2, 0.3])
    assert first.embedding_model == "n"
    assert list(second.embedding) == pytest.approx([0.5, 0.5, 0.5])
    assert second.embedding_model == "m"


@pytest.mark.django_db
def test_a_vector_keeps_its_floats_exactly(source):
    insert_chunks(
        source_id=source.pk, drafts=DRAFTS[:1], embedding_model="m", search_config="simple"
    )
    chunk = Chunk.objects.get(source=source)
    vector = [1 / 3, -2e-7, 0.123456789, 1.0]

    write_vectors(ids=[chunk.pk], vectors=[vector], model="m")

    chunk.refresh_from_db()
    assert [float(value) for value in chunk.embedding] == [
        pytest.approx(value, rel=1e-6, abs=1e-12) for value in vector
    ]


@pytest.mark.django_db
def test_vectors_sent_in_binary_are_stored_as_their_text_form_would_be(source):
    insert_chunks(source_id=source.pk, drafts=DRAFTS, embedding_model="m", search_config="simple")
    ids = list(Chunk.objects.filter(source=source).order_by("ordinal").values_list("pk", flat=True))
    # Doubles a model's JSON gives (not float32 values), a mean of window vectors among them.
    random = Random(7)
    vectors = [[random.uniform(-1, 1) for _ in range(384)] for _ in ids]

    write_vectors(ids=ids, vectors=vectors, model="m")

    with connection.cursor() as cursor:
        for pk, vector in zip(ids, vectors, strict=True):
            text = "[" + ",".join(map(repr, vector)) + "]"
            cursor.execute(
                "SELECT embedding = %s::vector FROM library_chunk WHERE id = %s", [text, pk]
            )
            assert cursor.fetchone() == (True,)
