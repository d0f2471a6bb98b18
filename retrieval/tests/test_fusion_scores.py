import pytest

from retrieval.search import Fusion
from retrieval.tests.chunks import add_chunk, hybrid, make_source, texts

MATCHES_FEW = "Some plants have zygomorphic flowers."
MATCHES_MANY = (
    "Zygomorphic flowers: plants with zygomorphic flowers. Which plants? Plants whose "
    "zygomorphic flowers have one plane of symmetry: zygomorphic plants, zygomorphic flowers."
)


@pytest.fixture
def meadow(notebook):
    """Dense candidates: a chunk right on the query that shares no word with the question
    and one nearly as close that does. Two chunks far from the query repeat the question's
    words and take the full-text list's places, so with two candidates a side the second
    chunk is in the dense list only."""
    source = make_source(notebook)
    add_chunk(source, "Grey herons wait at the edge of the pond.", [1.0, 0.0, 0.0])
    add_chunk(source, MATCHES_FEW, [1.0, 0.2, 0.0])
    add_chunk(source, MATCHES_MANY, [0.0, 1.0, 0.0])
    add_chunk(source, MATCHES_MANY + " Zygomorphic.", [0.0, 1.0, 0.1])
    return source


def test_a_dense_candidate_keeps_its_full_text_score_outside_the_full_text_list(notebook, meadow):
    hits = hybrid(notebook, fusion=Fusion(candidates=2, dense_weight=0.5))

    # Nearly as similar as the best and sharing the question's words: first. Scored 0 on
    # full text for missing the full-text list, it came after the heron chunk.
    assert texts(hits)[0] == MATCHES_FEW
    assert set(texts(hits)) == {
        "Grey herons wait at the edge of the pond.",
        MATCHES_FEW,
        MATCHES_MANY,
        MATCHES_MANY + " Zygomorphic.",
    }


def test_a_full_text_candidate_keeps_its_similarity_outside_the_dense_list(notebook):
    source = make_source(notebook)
    add_chunk(source, "Grey herons wait at the edge of the pond.", [1.0, 0.0, 0.0])
    add_chunk(source, "Reeds grow in shallow water.", [1.0, 0.05, 0.0])
    # Outside the two dense candidates, but much closer to the query than the other match.
    add_chunk(source, MATCHES_FEW, [1.0, 0.3, 0.0])
    add_chunk(source, "Zygomorphic flowers, zygomorphic plants.", [0.0, 1.0, 0.0])

    hits = hybrid(notebook, fusion=Fusion(candidates=2, dense_weight=0.5), k=4)

    order = texts(hits)
    assert order.index(MATCHES_FEW) < order.index("Zygomorphic flowers, zygomorphic plants.")
