import pytest

from library.models import Source
from notebooks.models import Notebook
from retrieval.search import search_notebook
from retrieval.services import retrieve
from retrieval.tests.chunks import MODEL, QUERY, add_chunk, hybrid, make_source, texts


@pytest.fixture
def pond(notebook):
    """Two chunks close to the query vector that share no word with the question, and one
    far from it that shares the rare word."""
    source = make_source(notebook)
    add_chunk(source, "Grey herons wait at the edge of the pond.", [1.0, 0.1, 0.0])
    add_chunk(source, "Reeds grow in shallow water.", [1.0, 0.3, 0.0])
    add_chunk(source, "Orchids bear zygomorphic blossoms.", [0.0, 1.0, 0.0])
    return source


def test_a_chunk_sharing_a_rare_word_is_found_in_hybrid_mode_below_the_dense_floor(notebook, pond):
    dense = search_notebook(notebook=notebook, query_vector=QUERY, model=MODEL, floor=0.5)
    hits = hybrid(notebook, floor=0.5)

    assert "Orchids bear zygomorphic blossoms." not in texts(dense)
    assert "Orchids bear zygomorphic blossoms." in texts(hits)
    # Each hit still carries its cosine similarity, for the citation.
    by_text = {hit.chunk.text: hit.similarity for hit in hits}
    assert by_text["Orchids bear zygomorphic blossoms."] == pytest.approx(0.0)
    assert by_text["Grey herons wait at the edge of the pond."] == pytest.approx(1 / (1.01**0.5))


def test_the_question_is_stemmed_like_the_source(notebook, pond):
    # "flowers" and "blossoms" differ, but "zygomorphic" and "zygomorphically" share a stem.
    hits = hybrid(notebook, question="zygomorphically", floor=0.5)

    assert "Orchids bear zygomorphic blossoms." in texts(hits)


def test_hybrid_searches_only_the_notebooks_ready_sources(owner, outsider, notebook):
    add_chunk(make_source(notebook, title="ready"), "ready zygomorphic", [0.0, 1.0, 0.0])
    for status in (Source.Status.QUEUED, Source.Status.PROCESSING, Source.Status.FAILED):
        add_chunk(make_source(notebook, status=status, title=status), "zygomorphic", QUERY)
    elsewhere = Notebook.objects.create(owner=owner, title="Elsewhere")
    add_chunk(make_source(elsewhere, title="other"), "zygomorphic flowers", QUERY)
    theirs = Notebook.objects.create(owner=outsider, title="Research")
    add_chunk(make_source(theirs, title="outsiders"), "zygomorphic flowers", QUERY)

    assert texts(hybrid(notebook)) == ["ready zygomorphic"]


def test_hybrid_compares_only_the_active_models_vectors(notebook):
    source = make_source(notebook)
    add_chunk(source, "ours", [0.0, 1.0, 0.0])
    add_chunk(source, "zygomorphic flowers, old model", QUERY, model="old-model")
    add_chunk(source, "zygomorphic flowers, bigger", [1.0, 0.0, 0.0, 0.0], model="big-model")

    assert texts(hybrid(notebook)) == ["ours"]


def test_sources_in_two_languages_are_each_searched_with_their_own_stemming(notebook):
    add_chunk(make_source(notebook, title="de", config="german"), "Die Häuser", [0.0, 1.0, 0.0])
    add_chunk(make_source(notebook, title="en", config="english"), "Houses", [0.0, 1.0, 0.0])
    add_chunk(make_source(notebook, title="x"), "Nothing related", [0.0, 1.0, 0.0])

    assert texts(hybrid(notebook, question="Haus", k=1)) == ["Die Häuser"]
    assert texts(hybrid(notebook, question="house", k=1)) == ["Houses"]


def test_hybrid_returns_at_most_k_and_nothing_for_an_empty_notebook(notebook, pond):
    assert len(hybrid(notebook, k=2)) == 2
    empty = Notebook.objects.create(owner=notebook.owner, title="Empty")
    assert hybrid(empty) == []


def test_a_question_of_stop_words_and_punctuation_still_gets_dense_hits(notebook, pond):
    hits = hybrid(notebook, question="what's the … it? 'a' \\ | & !", floor=0.5)

    assert texts(hits) == [
        "Grey herons wait at the edge of the pond.",
        "Reeds grow in shallow water.",
    ]


def test_retrieve_follows_the_retrieval_mode_setting(
    fake_openai, owner, notebook, add_ready_source, settings
):
    add_ready_source(notebook, b"Grey herons wait at the edge of the pond.", "herons.txt")
    add_ready_source(notebook, b"Sourdough bread needs a starter.", "bread.txt")
    # Far below every fake similarity: only the full-text side can let a chunk in.
    settings.SIMILARITY_FLOOR = 0.99

    settings.RETRIEVAL_MODE = "dense"
    assert retrieve(user=owner, notebook=notebook, question="sourdough?") == []
    settings.RETRIEVAL_MODE = "hybrid"
    hits = retrieve(user=owner, notebook=notebook, question="sourdough?")
    assert texts(hits) == ["Sourdough bread needs a starter."]
