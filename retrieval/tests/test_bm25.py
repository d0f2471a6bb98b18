"""Hybrid search in a large notebook bounds its full-text side: it matches on the question's
rarer lexemes (by PostgreSQL's statistics), on all the others at once, and on any of them
when those find too few, and scores at most RETRIEVAL_LEXICAL_CAP chunks; a notebook at or
below RETRIEVAL_EXACT_MAX_CHUNKS scores every match as before."""

from __future__ import annotations

import itertools
import json

import pytest
from django.contrib.postgres.search import SearchVector
from django.db import connection

from library.models import Chunk, Source
from notebooks.models import NotebookSource
from retrieval import search as search_module
from retrieval.search import Fusion, search_notebook_hybrid
from retrieval.tests.indexes import explain_as_run

MODEL = "fake-embed"
QUERY = [1.0, 0.0, 0.0]
COMMON = 50  # chunks that hold "water" (and "grow")
_hashes = itertools.count(70_000)


@pytest.fixture
def pond(notebook):
    """52 chunks: 50 about water near the query vector, one far from it holding the rare
    word "zygomorphic" (and "water"), one far from it holding neither; statistics taken."""
    source = Source.objects.create(
        owner=notebook.owner,
        kind=Source.Kind.TEXT,
        title="pond",
        filename="pond.txt",
        sha256=f"{next(_hashes):064x}",
        status=Source.Status.READY,
        chunk_count=COMMON + 2,  # what the size rule reads, as ingest writes it
        search_config="english",
    )
    NotebookSource.objects.create(notebook=notebook, source=source)
    texts = [
        (f"Reeds grow in the shallow water, bed {n}.", [1.0, 0.01 * n, 0.0]) for n in range(COMMON)
    ]
    texts += [
        ("Orchids bear zygomorphic blossoms by the water.", [0.0, 1.0, 0.0]),
        ("Herons stand still.", [0.0, 0.0, 1.0]),
    ]
    Chunk.objects.bulk_create(
        Chunk(
            source=source,
            ordinal=n,
            text=text,
            char_start=0,
            char_end=len(text),
            embedding=vector,
            embedding_model=MODEL,
        )
        for n, (text, vector) in enumerate(texts)
    )
    Chunk.objects.filter(source=source).update(search_vector=SearchVector("text", config="english"))
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE library_chunk")  # rolled back with the test
    return source


def search(notebook, question: str, **options):
    return search_notebook_hybrid(
        notebook=notebook, question=question, query_vector=QUERY, model=MODEL, **options
    )


def scored_by_the_lexical_side(notebook, question: str, **options) -> int:
    """Run the search, then EXPLAIN ANALYZE its statement: how many chunks ts_rank scored."""
    (plan,) = explain_as_run(
        lambda: search(notebook, question, **options), options="ANALYZE, FORMAT JSON"
    )
    plan = plan if isinstance(plan, list) else json.loads(plan)

    def nodes(node):
        yield node
        for child in node.get("Plans", []):
            yield from nodes(child)

    # A small notebook's matches are all ranked as they are read, then sorted for the best
    # (`notebook_matches`); a large notebook's are ranked as they are read from the index
    # (`index_matches`, `more_matches`), counted here as `all_matches` passes them on (lazily:
    # the cap stops the reading). The path not taken reads none.
    (exact,) = [
        n for n in nodes(plan[0]["Plan"]) if n.get("Subplan Name") == "CTE notebook_matches"
    ]
    (ranking,) = [n for n in nodes(exact) if n["Node Type"] == "Sort"]
    (read_off,) = [n for n in nodes(plan[0]["Plan"]) if n.get("CTE Name") == "all_matches"]
    return ranking["Plans"][0]["Actual Rows"] or read_off["Actual Rows"]


QUESTION = "Do orchids bear zygomorphic blossoms by the water?"
ORCHID = "Orchids bear zygomorphic blossoms by the water."


def test_the_statistics_tell_a_common_lexeme_from_a_rare_one(pond):
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT e.lexeme, e.frequency FROM pg_stats s, "
            "unnest(s.most_common_elems::text::text[], s.most_common_elem_freqs) "
            "AS e(lexeme, frequency) "
            "WHERE s.tablename = 'library_chunk' AND s.attname = 'search_vector'"
        )
        frequency = dict(cursor.fetchall())
    assert frequency["water"] == pytest.approx((COMMON + 1) / (COMMON + 2))
    # A sample this small lists every lexeme; a large one only the commonest.
    assert frequency.get("zygomorph", 0) < 2 / (COMMON + 2)


def test_a_small_notebook_scores_every_chunk_sharing_a_word(settings, notebook, pond):
    settings.RETRIEVAL_EXACT_MAX_CHUNKS = COMMON + 2

    assert scored_by_the_lexical_side(notebook, QUESTION) == COMMON + 1


def test_a_large_notebook_matches_on_the_rare_lexeme_and_still_finds_its_chunk(
    settings, notebook, pond
):
    settings.RETRIEVAL_EXACT_MAX_CHUNKS = 10
    settings.RETRIEVAL_LEXICAL_BUDGET = 5  # the four rare lexemes, not "water" (51 chunks)
    # One candidate a side: the chosen lexemes' one chunk is enough (see the next test).
    one = Fusion(candidates=1)

    assert scored_by_the_lexical_side(notebook, QUESTION, fusion=one) == 1
    hits = search(notebook, QUESTION, k=8, floor=0.5, fusion=one)
    # Far from the query vector, below the floor: only the lexical side can bring it.
    assert ORCHID in [hit.chunk.text for hit in hits]


def test_a_large_notebooks_rare_lexemes_that_match_too_few_are_joined_by_the_others(
    settings, notebook, pond
):
    settings.RETRIEVAL_EXACT_MAX_CHUNKS = 10
    settings.RETRIEVAL_LEXICAL_BUDGET = 5

    # Chosen, the four rare lexemes match one chunk, fewer than the 30 candidates a side the
    # exact path would rank: "water" is matched on too, its 50 other chunks within the cap.
    assert scored_by_the_lexical_side(notebook, QUESTION) == COMMON + 1

    # A word no chunk holds is the rarest by the statistics and the only one chosen: the
    # question's other word finds the heron, far from the query vector, below the floor.
    hits = search(notebook, "Where are the zzyzx herons?", k=8, floor=0.5)
    assert "Herons stand still." in [hit.chunk.text for hit in hits]


def test_a_large_notebook_finds_a_chunk_holding_every_word_of_the_question_but_the_rarest(
    settings, monkeypatch, notebook, pond
):
    settings.RETRIEVAL_EXACT_MAX_CHUNKS = 10
    settings.RETRIEVAL_LEXICAL_BUDGET = 0
    monkeypatch.setattr(search_module, "LEXICAL_SHARE", 0)  # only the rarest lexeme chosen
    # "blossom" (the orchid's) is as rare as the heron's three words and first by name, so
    # chosen; the heron's chunk, below the floor, holds all three others.
    question = "Do blossoms and herons stand still?"

    hits = search(notebook, question, k=8, floor=0.5)

    assert "Herons stand still." in [hit.chunk.text for hit in hits]
    settings.RETRIEVAL_EXACT_MAX_CHUNKS = 10**6
    assert [hit.chunk.pk for hit in search(notebook, question, k=8, floor=0.5)] == [
        hit.chunk.pk for hit in hits
    ]


def test_a_large_notebooks_question_of_common_words_is_cut_at_the_cap(settings, notebook, pond):
    settings.RETRIEVAL_EXACT_MAX_CHUNKS = 10
    settings.RETRIEVAL_LEXICAL_BUDGET = 5
    settings.RETRIEVAL_LEXICAL_CAP = 7

    # Its rarest lexeme is in 50 chunks: matched on alone, and scored in 7 of them.
    assert scored_by_the_lexical_side(notebook, "Where does water grow?") == 7
    hits = search(notebook, "Where does water grow?", k=8)
    assert len(hits) == 8


def test_a_large_notebooks_budget_and_cap_grow_with_it_up_to_the_most(
    settings, monkeypatch, notebook, pond
):
    settings.RETRIEVAL_EXACT_MAX_CHUNKS = 10
    settings.RETRIEVAL_LEXICAL_BUDGET = 0
    settings.RETRIEVAL_LEXICAL_CAP = 1
    monkeypatch.setattr(search_module, "LEXICAL_SHARE", 0.1)

    # A tenth of its 52 chunks: the question's rarest lexeme alone (in 50), scored in 5.
    assert scored_by_the_lexical_side(notebook, "Where does water grow?") == 5

    monkeypatch.setattr(search_module, "LEXICAL_MOST", 3)
    assert scored_by_the_lexical_side(notebook, "Where does water grow?") == 3

    # The settings stay the least.
    settings.RETRIEVAL_LEXICAL_CAP = 9
    assert scored_by_the_lexical_side(notebook, "Where does water grow?") == 9


def test_the_fused_score_still_counts_the_common_words_of_a_dense_hit(settings, notebook, pond):
    """A chunk matched on no chosen lexeme but found by the dense side gets the full-text
    score of all the question's words, as in a small notebook: same ranking both ways."""
    question = "zygomorphic water reeds"
    settings.RETRIEVAL_EXACT_MAX_CHUNKS = 10**6
    small = [hit.chunk.pk for hit in search(notebook, question, k=8)]
    settings.RETRIEVAL_EXACT_MAX_CHUNKS = 10
    settings.RETRIEVAL_LEXICAL_BUDGET = 5

    large = [hit.chunk.pk for hit in search(notebook, question, k=8)]

    assert large == small
