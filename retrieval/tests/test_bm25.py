"""The hybrid search's full-text side ranks by BM25: a small notebook's matches by loupe_bm25
(postgres/loupe_rank) over their stored full-text vectors, a large notebook's best from the
model's BM25 index (pg_textsearch), ranked the same way, so both paths agree."""

from __future__ import annotations

import itertools
import json

import pytest
from django.contrib.postgres.search import SearchVector
from django.db import DatabaseError, connection

from library import vector_indexes
from library.models import Chunk, Source
from notebooks.models import NotebookSource
from retrieval import search as search_module
from retrieval.search import Fusion, search_notebook_hybrid
from retrieval.tests.indexes import explain_as_run

MODEL = "fake-embed"
QUERY = [1.0, 0.0, 0.0]
COMMON = 50  # chunks that hold "water" (and "grow")
_hashes = itertools.count(70_000)


def scalar(sql: str, params=()):
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone()[0]


@pytest.fixture
def pond(notebook):
    """52 chunks: 50 about water near the query vector, one far from it holding the rare
    word "zygomorphic" (and "water"), one far from it holding neither; statistics taken and
    the model's BM25 index made, as ingest makes it."""
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
    vector_indexes.ensure_bm25_index(model=MODEL)
    return source


def search(notebook, question: str, **options):
    return search_notebook_hybrid(
        notebook=notebook, question=question, query_vector=QUERY, model=MODEL, **options
    )


def texts(hits) -> list[str]:
    return [hit.chunk.text for hit in hits]


def cte_rows(notebook, question: str, name: str) -> int:
    """Run the search, then EXPLAIN ANALYZE its statement: the rows step `name` made."""
    (plan,) = explain_as_run(lambda: search(notebook, question), options="ANALYZE, FORMAT JSON")
    plan = plan if isinstance(plan, list) else json.loads(plan)

    def nodes(node):
        yield node
        for child in node.get("Plans", []):
            yield from nodes(child)

    (step,) = [n for n in nodes(plan[0]["Plan"]) if n.get("Subplan Name") == f"CTE {name}"]
    return step["Actual Rows"]


QUESTION = "Do orchids bear zygomorphic blossoms by the water?"
ORCHID = "Orchids bear zygomorphic blossoms by the water."


@pytest.mark.django_db
def test_loupe_bm25_weighs_each_word_by_its_weight_and_saturates_its_repeats():
    vector = "to_tsvector('simple', 'virus, virus; cat')"
    # virus: 2 positions, cat: 1; each term's weight * tf * (k1 + 1) / (tf + k1).
    score = scalar(
        f"SELECT loupe_bm25({vector}, ARRAY['virus', 'cat', 'dog'], ARRAY[1, 3, 5]::float8[], 1.2)"
    )
    assert score == pytest.approx(2 * 2.2 / 3.2 + 3 * 1 * 2.2 / 2.2)
    # A word's tenth repeat adds less than its second.
    many = scalar(
        "SELECT loupe_bm25(to_tsvector('simple', repeat('cat ', 10)), ARRAY['cat'], "
        "ARRAY[1]::float8[], 1.2)"
    )
    assert 2 * 2.2 / 3.2 < many < 2.2
    assert scalar(f"SELECT loupe_bm25({vector}, ARRAY['dog'], ARRAY[1]::float8[], 1.2)") == 0
    with pytest.raises(DatabaseError, match="2 terms but 1 weights"):
        scalar(f"SELECT loupe_bm25({vector}, ARRAY['a', 'b'], ARRAY[1]::float8[], 1.2)")


@pytest.mark.django_db
def test_loupe_lexeme_text_repeats_each_lexeme_as_often_as_it_occurs():
    text = scalar("SELECT loupe_lexeme_text(to_tsvector('english', 'Cats chase cats; a dog.'))")
    assert sorted(text.split()) == ["cat", "cat", "chase", "dog"]
    assert scalar("SELECT loupe_lexeme_text(''::tsvector)") == ""


def test_loupe_lexeme_share_reads_each_word_s_share_of_the_chunks_from_the_statistics(pond):
    def share(lexeme: str) -> float:
        return scalar("SELECT loupe_lexeme_share('library_chunk', 'search_vector', %s)", [lexeme])

    # ANALYZE (the pond fixture) read every chunk: "water" is in 51 of the table's chunks,
    # "zygomorph" in one; a word it did not list counts half the least listed share.
    chunks = scalar("SELECT count(*) FROM library_chunk WHERE search_vector IS NOT NULL")
    assert share("water") == pytest.approx(51 / chunks, rel=1e-6)
    listed = scalar(
        "SELECT min(e.f) FROM pg_stats s, unnest(s.most_common_elems::text::text[], "
        "s.most_common_elem_freqs) AS e(lexeme, f) "
        "WHERE s.tablename = 'library_chunk' AND s.attname = 'search_vector' "
        "AND e.lexeme IS NOT NULL"
    )
    assert share("absentword") == pytest.approx(listed / 2)
    assert share("absentword") < share("zygomorph") < share("water")
    with pytest.raises(DatabaseError, match='no column "nothing"'):
        scalar("SELECT loupe_lexeme_share('library_chunk', 'nothing', 'water')")


@pytest.mark.django_db
def test_loupe_lexeme_share_is_0_for_every_word_before_the_first_statistics():
    with connection.cursor() as cursor:
        cursor.execute("CREATE TEMPORARY TABLE unanalysed (v tsvector)")
    assert scalar("SELECT loupe_lexeme_share('unanalysed', 'v', 'water')") == 0


def test_a_small_notebook_ranks_a_rare_word_above_a_common_one(settings, notebook, pond):
    """ts_rank scores a chunk holding "reeds" (50 of them) as one holding "zygomorphic" (the
    orchid alone): its best match was a reed bed; BM25 weighs the rare word more."""
    settings.RETRIEVAL_EXACT_MAX_CHUNKS = 10**6
    one = Fusion(candidates=1)  # one candidate a side: the full-text side's best

    hits = search(notebook, "zygomorphic reeds", k=8, floor=0.5, fusion=one)

    # Far from the query vector, below the floor: only the full-text side brings it.
    assert ORCHID in texts(hits)
    assert cte_rows(notebook, "zygomorphic reeds", "bm25_best") == 0  # the index not read


def test_a_large_notebook_takes_its_matches_from_the_bm25_index(settings, notebook, pond):
    settings.RETRIEVAL_EXACT_MAX_CHUNKS = 10

    hits = search(notebook, QUESTION, k=8, floor=0.5)

    assert ORCHID in texts(hits)
    # The model's chunks are all the notebook's: 1.5 times the 30 candidates, of its 51
    # matches.
    assert cte_rows(notebook, QUESTION, "bm25_best") == 45
    assert cte_rows(notebook, QUESTION, "notebook_matches") == 0


@pytest.mark.django_db
def test_the_bm25_index_s_rows_carry_the_score_it_computed_not_one_computed_again():
    """pg_textsearch's planner hook gives the rows of its scan the score the scan computed (a
    stub); it skipped a scan in a CTE, as hybrid.sql's `bm25_best` is, and a plan made again
    without its statement parsed again (a prepared statement's, as the search's): there the
    real operator ran once more for every row, many times the scan's own cost
    (postgres/pg_textsearch/LOUPE.md). EXECUTE plans without parsing the statement again.
    A table of its own, written before its index: an index made in the test's transaction
    over rows updated in it would not be used by that transaction."""
    with connection.cursor() as cursor:
        cursor.execute("CREATE TEMPORARY TABLE scored (id int, v tsvector)")
        cursor.execute(
            "INSERT INTO scored SELECT n, to_tsvector('simple', 'reeds water ' || "
            "CASE WHEN n = 7 THEN 'zygomorph' ELSE '' END) FROM generate_series(1, 200) n"
        )
        cursor.execute(
            "CREATE INDEX scored_bm25 ON scored USING "
            + vector_indexes.BM25_METHOD.replace("search_vector", "v")
        )
        # As the search's settings do (enable_sort); the table is too small for the planner
        # to prefer the index on its own.
        for method in ("seqscan", "bitmapscan", "sort"):
            cursor.execute(f"SET LOCAL enable_{method} = off")
        cursor.execute(
            "PREPARE best AS WITH best AS MATERIALIZED ("
            "  SELECT id FROM scored"
            "  ORDER BY loupe_lexeme_text(v) <@> to_bm25query('zygomorph water', 'scored_bm25')"
            "  LIMIT 5) SELECT id FROM best"
        )
        cursor.execute("EXECUTE best")
        assert cursor.fetchall()[0] == (7,)
        cursor.execute("EXPLAIN (VERBOSE, COSTS OFF) EXECUTE best")
        plan = [row[0] for row in cursor.fetchall()]
        cursor.execute("DEALLOCATE best")
    (scan,) = [n for n, line in enumerate(plan) if "Index Scan using scored_bm25" in line]
    assert "Output:" in plan[scan + 1]
    assert "bm25_get_current_score()" in plan[scan + 1]
    assert "<@>" not in plan[scan + 1]


def test_both_paths_rank_the_same(settings, notebook, pond):
    for question in (QUESTION, "Where does water grow?", "zygomorphic water reeds"):
        settings.RETRIEVAL_EXACT_MAX_CHUNKS = 10**6
        small = [hit.chunk.pk for hit in search(notebook, question, k=8)]
        settings.RETRIEVAL_EXACT_MAX_CHUNKS = 10
        large = [hit.chunk.pk for hit in search(notebook, question, k=8)]
        assert large == small, question


def test_a_large_notebook_asks_the_index_for_more_when_it_is_a_small_share_of_the_model(
    settings, monkeypatch, notebook, pond
):
    settings.RETRIEVAL_EXACT_MAX_CHUNKS = 10
    vector_indexes.ensure_vector_index(model=MODEL, dimensions=3)
    with connection.cursor() as cursor:  # the model's index as if it held 520 rows
        name = vector_indexes.index_name(model=MODEL, dimensions=3)
        cursor.execute("UPDATE pg_class SET reltuples = 520 WHERE relname = %s", [name])

    # The notebook a tenth of the model: 450 asked, all the index holds for the question
    # (its 51 matches; pg_textsearch may add a chunk scoring 0 once the matches run out).
    assert cte_rows(notebook, QUESTION, "bm25_best") >= 51

    monkeypatch.setattr(search_module, "REACH_MOST", 20)
    assert cte_rows(notebook, QUESTION, "bm25_best") == 20


def test_a_large_notebook_without_its_bm25_index_is_matched_exactly(settings, notebook, pond):
    settings.RETRIEVAL_EXACT_MAX_CHUNKS = 10
    with connection.cursor() as cursor:
        cursor.execute(f"DROP INDEX {vector_indexes.bm25_index_name(model=MODEL)}")
    vector_indexes._known.clear()

    hits = search(notebook, QUESTION, k=8, floor=0.5)

    assert ORCHID in texts(hits)
    assert cte_rows(notebook, QUESTION, "notebook_matches") == 30


def test_a_question_of_stop_words_alone_searches_by_meaning_in_a_large_notebook(
    settings, notebook, pond
):
    """No lexeme at all: the index is asked with an empty query (pg_textsearch's process
    stops on a NULL one), and the dense side alone answers."""
    settings.RETRIEVAL_EXACT_MAX_CHUNKS = 10

    hits = search(notebook, "Why was this?", k=8)

    assert len(hits) == 8
    assert cte_rows(notebook, "Why was this?", "bm25_best") == 0
