"""The hybrid search's full-text side ranks by BM25 (loupe_bm25, an SQL function of migration
0021) over the chunks' stored full-text vectors: a small notebook's every match, a large
notebook's matches on the question's rarest words through the model's full-text index, so
both paths agree on plain PostgreSQL with pgvector."""

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
from retrieval.statements import WORD_RANK_TERMS, word_rank_sql
from retrieval.tests.indexes import explain_as_run

MODEL = "fake-embed"
QUERY = [1.0, 0.0, 0.0]
COMMON = 50  # chunks that hold "water" (and "grow")
_hashes = itertools.count(70_000)


def scalar(sql: str, params=()):
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone()[0]


def add_source(notebook, title: str, chunks: list[tuple[str, list[float]]]) -> Source:
    """A ready English text source of `chunks` (text, vector) in `notebook`, in that order,
    its full-text vectors written and the table's statistics taken (rolled back with the
    test)."""
    source = Source.objects.create(
        owner=notebook.owner,
        kind=Source.Kind.TEXT,
        title=title,
        filename=f"{title}.txt",
        sha256=f"{next(_hashes):064x}",
        status=Source.Status.READY,
        chunk_count=len(chunks),  # what the size rule reads, as ingest writes it
        search_config="english",
    )
    NotebookSource.objects.create(notebook=notebook, source=source)
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
        for n, (text, vector) in enumerate(chunks)
    )
    Chunk.objects.filter(source=source).update(search_vector=SearchVector("text", config="english"))
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE library_chunk")
    return source


@pytest.fixture
def pond(notebook):
    """52 chunks: 50 about water near the query vector, one far from it holding the rare
    word "zygomorphic" (and "water"), one far from it holding neither; statistics taken."""
    texts = [
        (f"Reeds grow in the shallow water, bed {n}.", [1.0, 0.01 * n, 0.0]) for n in range(COMMON)
    ]
    texts += [
        ("Orchids bear zygomorphic blossoms by the water.", [0.0, 1.0, 0.0]),
        ("Herons stand still.", [0.0, 0.0, 1.0]),
    ]
    return add_source(notebook, "pond", texts)


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
    assert scalar("SELECT loupe_bm25(''::tsvector, ARRAY['dog'], ARRAY[1]::float8[], 1.2)") == 0


@pytest.mark.django_db
@pytest.mark.parametrize("written", [2, WORD_RANK_TERMS])
def test_word_rank_sums_each_word_s_ts_rank_times_its_weight_however_many_words(written):
    # Twenty words: more than the expression writes out, so both its parts are summed.
    words = [f"w{n}" for n in range(20)]
    text = " ".join(word for n, word in enumerate(words) for _ in range(n % 4))  # w0 none
    weights = [1 + n / 10 for n in range(20)]
    vector = f"to_tsvector('simple', '{text}')"
    each = [
        scalar(f"SELECT ts_rank({vector}, %s::tsquery) * %s", [word, weight])
        for word, weight in zip(words, weights, strict=True)
    ]

    for count in (1, 2, 5, 20):
        rank = scalar(
            f"SELECT {word_rank_sql(written)} FROM (SELECT {vector} AS search_vector) AS c, "
            "(SELECT %s::tsquery[] AS queries, %s::float8[] AS weights) AS w",
            [words[:count], weights[:count]],
        )
        assert rank == pytest.approx(sum(each[:count]))
    assert sum(each[:5]) > 0


def test_loupe_lexeme_shares_reads_each_word_s_share_of_the_chunks_from_the_statistics(pond):
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT term, share FROM loupe_lexeme_shares(ARRAY['water', 'zygomorph', 'absentword'])"
        )
        share = dict(cursor.fetchall())

    # ANALYZE (the pond fixture) read every chunk: "water" is in 51 of the table's chunks,
    # "zygomorph" in one; a word it did not list counts half the least listed share.
    chunks = scalar("SELECT count(*) FROM library_chunk WHERE search_vector IS NOT NULL")
    assert share["water"] == pytest.approx(51 / chunks, rel=1e-6)
    listed = scalar(
        "SELECT min(e.f) FROM pg_stats s, unnest(s.most_common_elems::text::text[], "
        "s.most_common_elem_freqs) AS e(lexeme, f) "
        "WHERE s.tablename = 'library_chunk' AND s.attname = 'search_vector' "
        "AND e.lexeme IS NOT NULL"
    )
    assert share["absentword"] == pytest.approx(listed / 2)
    assert share["absentword"] < share["zygomorph"] < share["water"]


def test_a_small_notebook_ranks_a_rare_word_above_a_common_one(settings, notebook, pond):
    """ts_rank scores a chunk holding "reeds" (50 of them) as one holding "zygomorphic" (the
    orchid alone): its best match was a reed bed; BM25 weighs the rare word more."""
    settings.RETRIEVAL_EXACT_MAX_CHUNKS = 10**6
    one = Fusion(candidates=1)  # one candidate a side: the full-text side's best

    hits = search(notebook, "zygomorphic reeds", k=8, floor=0.5, fusion=one)

    # Far from the query vector, below the floor: only the full-text side brings it.
    assert ORCHID in texts(hits)
    assert cte_rows(notebook, "zygomorphic reeds", "index_matches") == 0  # matched exactly


def test_a_large_notebook_matches_on_its_rarest_words_within_its_budget(
    settings, monkeypatch, notebook, pond
):
    settings.RETRIEVAL_EXACT_MAX_CHUNKS = 10
    monkeypatch.setattr(search_module, "LEXICAL_BUDGET", 10)
    monkeypatch.setattr(search_module, "LEXICAL_SHARE", 0.01)

    hits = search(notebook, QUESTION, k=8, floor=0.5)

    assert ORCHID in texts(hits)
    # orchid, bear, zygomorph and blossom are expected in 4 chunks, within the budget of 10;
    # "water" (51) is not: the rare words match the orchid alone.
    assert cte_rows(notebook, QUESTION, "index_matches") == 1
    # Fewer than the 30 candidates: the notebook is matched on its other words too.
    assert cte_rows(notebook, QUESTION, "more_matches") == 50
    assert cte_rows(notebook, QUESTION, "notebook_matches") == 0


@pytest.mark.parametrize("large", [False, True])
def test_only_the_best_matches_by_their_words_ranks_are_ranked_by_bm25(
    settings, monkeypatch, notebook, pond, large
):
    """Every match is ranked by its words' ts_rank times their idf; only the best RESCORED of
    those by BM25 itself. The rare word weighs most there too: with one, it is the orchid."""
    settings.RETRIEVAL_EXACT_MAX_CHUNKS = 10 if large else 10**6
    monkeypatch.setattr(search_module, "RESCORED", 1)
    one = Fusion(candidates=1)

    hits = search(notebook, "zygomorphic reeds", k=8, floor=0.5, fusion=one)

    assert ORCHID in texts(hits)
    assert cte_rows(notebook, "zygomorphic reeds", "rescored") == 1
    matched = "index_matches" if large else "notebook_matches"
    assert cte_rows(notebook, "zygomorphic reeds", matched) == 51


def test_both_paths_rank_the_same(settings, notebook, pond):
    for question in (QUESTION, "Where does water grow?", "zygomorphic water reeds"):
        settings.RETRIEVAL_EXACT_MAX_CHUNKS = 10**6
        small = [hit.chunk.pk for hit in search(notebook, question, k=8)]
        settings.RETRIEVAL_EXACT_MAX_CHUNKS = 10
        large = [hit.chunk.pk for hit in search(notebook, question, k=8)]
        assert large == small, question


def test_a_question_of_stop_words_alone_searches_by_meaning_in_a_large_notebook(
    settings, notebook, pond
):
    """No lexeme at all: nothing to match on, and the dense side alone answers."""
    settings.RETRIEVAL_EXACT_MAX_CHUNKS = 10

    hits = search(notebook, "Why was this?", k=8)

    assert len(hits) == 8
    assert cte_rows(notebook, "Why was this?", "rescored") == 0


def test_a_large_notebook_whose_rare_words_match_nothing_reads_the_others_rarest_first(
    settings, monkeypatch, notebook
):
    """The question's rarest words are misspelt or absent; of the others, "water" is in the
    40 chunks first in the table and "heron" in the 12 after them. Within a cap of 5 the
    herons' chunks are read, not the first 5 in the table."""
    rows = [f"Water fills pond {n}." for n in range(40)]
    rows += [f"Herons wade at pond {n}." for n in range(40, 52)]
    # All far from the question: the full text alone ranks.
    add_source(notebook, "ponds", [(text, [0.0, 0.0, 1.0]) for text in rows])
    settings.RETRIEVAL_EXACT_MAX_CHUNKS = 10
    monkeypatch.setattr(search_module, "LEXICAL_BUDGET", 10)
    monkeypatch.setattr(search_module, "LEXICAL_SHARE", 0.01)
    monkeypatch.setattr(search_module, "MATCHED_MOST", 5)
    question = "Do herons meet zygomorfic water?"

    hits = search(notebook, question, k=8, floor=0.5)

    assert texts(hits) and all(text.startswith("Herons") for text in texts(hits))
    assert cte_rows(notebook, question, "index_matches") == 0
    assert cte_rows(notebook, question, "more_matches") == 5


@pytest.fixture
def orchid_beds(notebook):
    """A notebook where the question's every word is common: 40 beds of blooming orchids and
    40 ponds of water first in the table, then the two chunks that hold the whole question
    ("orchids bloom by the water"), all four far from the query vector; statistics taken."""
    rows = [f"Orchids bloom in bed {n}." for n in range(40)]
    rows += [f"Water fills pond {n}." for n in range(40)]
    best = ["Orchids bloom by the water in bed 90.", "Orchids bloom by the water in bed 91."]
    rows += best
    add_source(
        notebook,
        "beds",
        [
            (text, [0.0, 0.0, 1.0] if text in best else [1.0, 0.01 * n, 0.0])
            for n, text in enumerate(rows)
        ],
    )
    return best


def test_a_large_notebook_reads_at_most_its_cap_of_matches_and_the_whole_question_first(
    settings, monkeypatch, notebook, orchid_beds
):
    """Each of the question's words is in 42 chunks, beyond the budget: the rarest alone is
    matched, in more chunks than the cap of 5. The two that hold every word come last in the
    table, so reading the matches in the table's order up to the cap would miss them; they
    are read first."""
    settings.RETRIEVAL_EXACT_MAX_CHUNKS = 10
    monkeypatch.setattr(search_module, "LEXICAL_BUDGET", 10)
    monkeypatch.setattr(search_module, "LEXICAL_SHARE", 0.01)
    monkeypatch.setattr(search_module, "MATCHED_MOST", 5)
    question = "Do orchids bloom by the water?"

    hits = search(notebook, question, k=8, floor=0.5)

    # Below the floor on the dense side: the full-text side alone brings them.
    assert set(orchid_beds) <= set(texts(hits))
    assert cte_rows(notebook, question, "index_matches") == 5


def test_a_large_notebook_whose_rare_words_match_nothing_reads_at_most_its_cap_of_the_others(
    settings, monkeypatch, notebook, pond
):
    """A misspelt word is the rarest by the statistics and matches nothing: the other words'
    matches are read instead, at most the cap of them."""
    settings.RETRIEVAL_EXACT_MAX_CHUNKS = 10
    monkeypatch.setattr(search_module, "LEXICAL_BUDGET", 10)
    monkeypatch.setattr(search_module, "LEXICAL_SHARE", 0.01)
    monkeypatch.setattr(search_module, "MATCHED_MOST", 5)
    question = "Where is the zygomorfic water?"

    hits = search(notebook, question, k=8)

    assert len(hits) == 8
    assert cte_rows(notebook, question, "index_matches") == 0
    assert cte_rows(notebook, question, "more_matches") == 5
