"""Hybrid search compares chunks with the question from the notebook's centre (the mean of
its chunks' vectors), and keeps places among the k for the chunks closest in meaning
(retrieval/sql/hybrid.sql, `centre` and `chosen`)."""

import math

import pytest

from library.models import Chunk, Source
from retrieval.search import CENTRE_MIN_CHUNKS, CENTRE_SAMPLE, Fusion, search_notebook_hybrid
from retrieval.tests.chunks import MODEL, QUESTION, add_chunk, make_source, texts

pytestmark = pytest.mark.django_db


def unit(*values: float) -> list[float]:
    length = math.sqrt(sum(value * value for value in values))
    return [value / length for value in values]


# The question leans towards the collection's common direction (x) and a little towards y.
QUERY = unit(1.0, 0.2, 0.0)
# Close to everything: the collection's own direction.
HUB = "Grey herons wait at the edge of the pond."
# Further from the query than the hub by plain cosine, but the only chunk that leans where
# the question leans beyond what every chunk shares.
ANSWER = "Reed warblers nest in the tall stems beside the water."


def collection(notebook, *, fillers: int) -> Source:
    """`fillers` chunks around the common direction (x, leaning up or down in z), the hub
    on it, and the answer leaning towards y."""
    source = make_source(notebook)
    # In one statement: a notebook larger than the centre's sample has hundreds.
    Chunk.objects.bulk_create(
        Chunk(
            source=source,
            ordinal=n,
            text=f"Moorhens number {n} swim past.",
            char_start=0,
            char_end=1,
            embedding=unit(1.0, 0.0, 0.3 * (-1) ** n),
            embedding_model=MODEL,
        )
        for n in range(fillers)
    )
    add_chunk(source, HUB, unit(1.0, 0.0, 0.0))
    add_chunk(source, ANSWER, unit(1.0, 0.5, 0.0))
    source.chunk_count = fillers + 2
    source.save(update_fields=["chunk_count"])
    return source


def search(notebook, *, k=3, **fusion):
    return search_notebook_hybrid(
        notebook=notebook,
        question=QUESTION,
        query_vector=QUERY,
        model=MODEL,
        fusion=Fusion(**fusion),
        k=k,
    )


def test_seen_from_the_centre_the_chunk_that_leans_where_the_question_leans_comes_first(
    notebook,
):
    collection(notebook, fillers=CENTRE_MIN_CHUNKS)

    assert texts(search(notebook, centred=False))[0] == HUB
    hits = search(notebook, centred=True)

    assert texts(hits)[0] == ANSWER
    # The similarity a hit carries (shown, and judged by the coverage check) stays the plain
    # cosine similarity.
    plain = sum(q * a for q, a in zip(QUERY, unit(1.0, 0.5, 0.0), strict=True))
    assert hits[0].similarity == pytest.approx(plain, abs=1e-6)


def test_a_notebook_larger_than_the_sample_is_compared_from_its_sampled_centre(notebook):
    collection(notebook, fillers=2 * CENTRE_SAMPLE)

    assert texts(search(notebook, centred=True))[0] == ANSWER


def test_a_notebook_of_a_few_chunks_is_compared_from_the_origin(notebook):
    collection(notebook, fillers=CENTRE_MIN_CHUNKS - 3)

    assert texts(search(notebook, centred=True))[0] == HUB


WORDY = "Zygomorphic flowers: plants with zygomorphic flowers, {n}."


@pytest.fixture
def wordy(notebook):
    """Three chunks full of the question's words, not very close to it in meaning, and one
    closest in meaning that shares none of its words."""
    source = make_source(notebook)
    for n in range(3):
        add_chunk(source, WORDY.format(n=n), unit(1.0, 0.6 + 0.1 * n, 0.0))
    add_chunk(source, HUB, QUERY)
    return source


def test_the_chunks_closest_in_meaning_keep_a_place_among_the_k_whatever_their_words(
    notebook, wordy
):
    without = search(notebook, dense_places=0, k=2)
    assert HUB not in texts(without)

    hits = search(notebook, dense_places=1, k=2)

    # It takes the last place and keeps its fused score's rank: after the best of the rest.
    assert texts(hits) == [texts(without)[0], HUB]


def test_a_generated_document_gets_no_place_closest_in_meaning(notebook, wordy):
    note = make_source(notebook, kind=Source.Kind.NOTE, title="note")
    add_chunk(note, "A note on herons.", QUERY)

    hits = search(notebook, dense_places=1, k=2)

    assert "A note on herons." not in texts(hits)
    assert HUB in texts(hits)
