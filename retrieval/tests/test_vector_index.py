"""HNSW per embedding model: made with the first vectors, by migration, by the reembed
switch and by `manage.py reembed --index`; used for large notebooks only, never starved by
the notebook filter, never leaking another owner's chunks."""

from __future__ import annotations

import importlib
import io
import itertools

import numpy as np
import pytest
from django.apps import apps
from django.core.management import call_command
from django.db import connection, transaction

from library import embedding_state, vector_indexes
from library.models import Chunk, Source
from notebooks.models import Notebook, NotebookSource
from providers import embeddings
from retrieval import search
from retrieval.reembed import run_reembed, start_reembed
from retrieval.search import search_notebook, search_notebook_hybrid
from retrieval.tests.indexes import TEXT, cte_plan, plan_of_the_ranking_statement, sent_statements

MODEL = "bench-like-8"
DIMS = 8
_hashes = itertools.count(50_000)


@pytest.fixture(autouse=True)
def no_vector_indexes(db):
    """Start without any model's index: a test that committed (transaction=True) leaves
    its indexes behind, as emptying the tables does not drop them. Dropped inside this
    test's transaction, they come back when it rolls back."""
    with connection.cursor() as cursor:
        for name in vector_indexes.vector_indexes():
            cursor.execute(f"DROP INDEX {name}")
    vector_indexes._known.clear()


def index_exists(model: str, dimensions: int) -> bool:
    return bool(
        vector_indexes.index_is_valid(vector_indexes.index_name(model=model, dimensions=dimensions))
    )


def make_source(notebook, chunks: int, vectors: np.ndarray, *, title: str = "doc") -> Source:
    source = Source.objects.create(
        owner=notebook.owner,
        kind=Source.Kind.TEXT,
        title=title,
        filename=f"{title}.txt",
        sha256=f"{next(_hashes):064x}",
        status=Source.Status.READY,
        chunk_count=chunks,  # what the size rule reads, as ingest writes it
        search_config="english",
    )
    NotebookSource.objects.create(notebook=notebook, source=source)
    Chunk.objects.bulk_create(
        Chunk(
            source=source,
            ordinal=n,
            text=f"{title} {n} herons",
            char_start=0,
            char_end=1,
            embedding=vectors[n].tolist(),
            embedding_model=MODEL,
        )
        for n in range(chunks)
    )
    return source


def near(query: np.ndarray, count: int, spread: float, rng: np.random.Generator) -> np.ndarray:
    """`count` unit vectors around `query`, the farther the larger `spread`."""
    vectors = query + spread * rng.standard_normal((count, DIMS))
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


@pytest.fixture
def crowded(owner, outsider, notebook):
    """Our notebook of 40 chunks, inside a table where 1,500 chunks of another owner sit
    nearer the query than any of ours; the model's HNSW index built over all of them."""
    rng = np.random.default_rng(7)
    query = np.zeros(DIMS)
    query[0] = 1.0
    theirs = Notebook.objects.create(owner=outsider, title="Theirs")
    make_source(theirs, 1_500, near(query, 1_500, 0.05, rng), title="theirs")
    make_source(notebook, 40, near(query, 40, 0.6, rng), title="ours")
    vector_indexes.ensure_vector_index(model=MODEL, dimensions=DIMS)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE library_chunk")
    return query.tolist()


def ours_only(hits) -> bool:
    return all(hit.chunk.text.startswith("ours ") for hit in hits)


def exact_ranking(notebook, query, k):
    return [
        hit.chunk.pk
        for hit in search_notebook(notebook=notebook, query_vector=query, model=MODEL, k=k)
    ]


def test_the_first_vectors_of_a_model_get_its_index(fake_openai, notebook, add_ready_source):
    assert not index_exists("fake-embed", 64)

    add_ready_source(notebook, b"Grey herons wait at the edge of the pond.")

    assert index_exists("fake-embed", 64)


def test_the_migration_indexes_the_active_models_existing_vectors(
    fake_openai, notebook, add_ready_source
):
    add_ready_source(notebook, b"Grey herons wait at the edge of the pond.")
    name = vector_indexes.index_name(model="fake-embed", dimensions=64)
    with connection.cursor() as cursor:
        cursor.execute(f"DROP INDEX {name}")
    migration = importlib.import_module("library.migrations.0009_chunk_vector_index")

    migration.index_the_active_models_vectors(apps, None)

    assert index_exists("fake-embed", 64)


def test_reembed_indexes_the_new_model_before_it_switches_and_drops_the_old_index(
    fake_openai, settings, notebook, add_ready_source
):
    settings.CHUNK_TOKENS, settings.CHUNK_OVERLAP_TOKENS = 25, 0
    settings.MODEL_PRICES = {**settings.MODEL_PRICES, "fake-embed-2": {"input_per_million": "1"}}
    add_ready_source(notebook, TEXT)
    settings.EMBEDDING_MODEL, settings.EMBEDDING_DIMENSIONS = "fake-embed-2", 32
    start_reembed(model=embeddings.configured_model())
    seen = []
    # The last batch written: the index is there before the switch, while no chunk has
    # the new model yet.
    run_reembed(
        batch_size=100,
        on_batch=lambda state: seen.append(index_exists("fake-embed-2", 32)),
    )
    assert embedding_state.active_model() == "fake-embed-2"
    assert index_exists("fake-embed-2", 32)
    assert not index_exists("fake-embed", 64)
    assert vector_indexes.vector_indexes() == [
        vector_indexes.index_name(model="fake-embed-2", dimensions=32)
    ]
    assert seen == [False]  # built after the vectors, at the switch


def test_reembed_index_builds_the_active_models_index_when_missing(
    fake_openai, notebook, add_ready_source
):
    add_ready_source(notebook, b"Grey herons wait at the edge of the pond.")
    name = vector_indexes.index_name(model="fake-embed", dimensions=64)
    with connection.cursor() as cursor:
        cursor.execute(f"DROP INDEX {name}")
    out = io.StringIO()

    call_command("reembed", "--index", stdout=out)
    call_command("reembed", "--index", stdout=out)

    assert index_exists("fake-embed", 64)
    text_name = vector_indexes.text_index_name(model="fake-embed")
    assert out.getvalue().splitlines() == [
        f"{text_name} (full text) for fake-embed exists already.",
        f"Built {name} for fake-embed (64 dimensions).",
        f"{text_name} (full text) for fake-embed exists already.",
        f"{name} for fake-embed (64 dimensions) exists already.",
    ]


def hnsw_scan_ran(plan: str) -> bool:
    lines = [line for line in plan.splitlines() if "Index Scan using library_chunk_hnsw_" in line]
    assert lines, plan  # the HNSW branch is always in the statement
    return any("never executed" not in line for line in lines)


@pytest.mark.parametrize("mode", ["dense", "hybrid"])
def test_a_large_notebook_is_searched_through_the_index_and_a_small_one_exactly(
    settings, notebook, crowded, mode
):
    def search():
        if mode == "dense":
            return search_notebook(notebook=notebook, query_vector=crowded, model=MODEL)
        return search_notebook_hybrid(
            notebook=notebook, question="herons", query_vector=crowded, model=MODEL
        )

    settings.RETRIEVAL_EXACT_MAX_CHUNKS = 39
    assert hnsw_scan_ran(plan_of_the_ranking_statement(search))
    settings.RETRIEVAL_EXACT_MAX_CHUNKS = 40
    assert not hnsw_scan_ran(plan_of_the_ranking_statement(search))


@pytest.mark.parametrize("mode", ["dense", "hybrid"])
def test_a_smaller_notebook_with_enough_of_the_index_has_its_vectors_ranked_through_it(
    settings, monkeypatch, notebook, crowded, mode
):
    # Ours: 40 of the index's 1,540 rows (2.6 %), below RETRIEVAL_EXACT_MAX_CHUNKS.
    settings.RETRIEVAL_EXACT_MAX_CHUNKS = 10**9
    exact = exact_ranking(notebook, crowded, 8)

    def ask():
        if mode == "dense":
            return search_notebook(notebook=notebook, query_vector=crowded, model=MODEL, k=8)
        return search_notebook_hybrid(
            notebook=notebook, question="herons", query_vector=crowded, model=MODEL, k=8
        )

    def through_the_index(min_chunks: int, min_share: float) -> bool:
        monkeypatch.setattr(search, "INDEX_MIN_CHUNKS", min_chunks)
        monkeypatch.setattr(search, "INDEX_MIN_SHARE", min_share)
        plan = plan_of_the_ranking_statement(ask)
        if mode == "hybrid":
            # The full text follows the same rule: through the model's full-text index on
            # the rarest words where the vectors go through its HNSW index, else the
            # notebook's own matches, exactly.
            bounded = any(
                "Scan" in line and " library_chunk" in line and "never executed" not in line
                for line in cte_plan(plan, "index_matches")
            )
            assert bounded == hnsw_scan_ran(plan), plan
        return hnsw_scan_ran(plan)

    assert through_the_index(40, 0.025)
    if mode == "dense":
        assert [hit.chunk.pk for hit in ask()] == exact
    else:
        assert len(ask()) == 8 and ours_only(ask())
    assert not through_the_index(40, 0.027)  # a smaller share than asked for
    assert not through_the_index(41, 0.025)  # fewer chunks than asked for


def test_a_hybrid_search_from_the_notebooks_centre_keeps_the_exact_scan(
    settings, monkeypatch, notebook, crowded
):
    # The index knows distances from the origin only: a model whose hybrid search compares
    # from the notebook's centre (its profile) keeps reading its vectors whole up to
    # RETRIEVAL_EXACT_MAX_CHUNKS, whatever its share of the index.
    settings.RETRIEVAL_EXACT_MAX_CHUNKS = 10**9
    monkeypatch.setattr(search, "INDEX_MIN_CHUNKS", 40)
    monkeypatch.setattr(search, "INDEX_MIN_SHARE", 0.025)

    def ask(centred: bool) -> list:
        return search_notebook_hybrid(
            notebook=notebook,
            question="herons",
            query_vector=crowded,
            model=MODEL,
            k=8,
            fusion=search.Fusion(centred=centred),
        )

    assert hnsw_scan_ran(plan_of_the_ranking_statement(lambda: ask(False)))
    centred = plan_of_the_ranking_statement(lambda: ask(True))
    assert not hnsw_scan_ran(centred)
    # Its full text does not care where it is compared from: bounded by the same rule.
    assert any(
        "Scan" in line and "never executed" not in line
        for line in cte_plan(centred, "index_matches")
    ), centred
    assert len(ask(True)) == 8 and ours_only(ask(True))


@pytest.mark.parametrize("mode", ["dense", "hybrid"])
def test_the_notebook_filter_does_not_starve_the_index(settings, notebook, crowded, mode):
    # ef_search 10: the index's first 10 candidates are all the other owner's; without
    # the iterative scan our notebook would get nothing.
    settings.RETRIEVAL_HNSW_EF_SEARCH = 10
    settings.RETRIEVAL_EXACT_MAX_CHUNKS = 0

    if mode == "dense":
        hits = search_notebook(notebook=notebook, query_vector=crowded, model=MODEL, k=8)
    else:
        hits = search_notebook_hybrid(
            notebook=notebook, question="herons", query_vector=crowded, model=MODEL, k=8
        )

    assert len(hits) == 8
    assert ours_only(hits)


def test_hnsw_ranks_like_the_exact_scan(settings, notebook, crowded):
    settings.RETRIEVAL_EXACT_MAX_CHUNKS = 10**9
    exact = exact_ranking(notebook, crowded, 8)
    settings.RETRIEVAL_EXACT_MAX_CHUNKS = 0

    hits = search_notebook(notebook=notebook, query_vector=crowded, model=MODEL, k=8)

    # 40 chunks: the graph search finds the true nearest ones, best first.
    assert [hit.chunk.pk for hit in hits] == exact
    similarities = [hit.similarity for hit in hits]
    assert similarities == sorted(similarities, reverse=True)


def test_the_other_owner_searching_through_the_index_never_gets_our_chunks(
    settings, outsider, crowded
):
    settings.RETRIEVAL_EXACT_MAX_CHUNKS = 0
    theirs = Notebook.objects.get(owner=outsider)
    far = (-np.array(crowded)).tolist()  # nearer ours than theirs

    hits = search_notebook(notebook=theirs, query_vector=far, model=MODEL, k=20)

    assert len(hits) == 20
    assert all(hit.chunk.text.startswith("theirs ") for hit in hits)


def test_vectors_beyond_what_hnsw_indexes_get_no_index_and_still_search():
    assert vector_indexes.indexed_type(2_000) == "vector"
    assert vector_indexes.indexed_type(3_072) == "halfvec"
    assert vector_indexes.indexed_type(4_001) is None
    assert not vector_indexes.ensure_vector_index(model="huge", dimensions=4_001)


def test_the_search_settings_do_not_outlive_the_search_in_the_callers_transaction(
    notebook, crowded
):
    with transaction.atomic(), connection.cursor() as cursor:
        search_notebook(notebook=notebook, query_vector=crowded, model=MODEL)
        cursor.execute("SELECT current_setting('enable_sort'), current_setting('hnsw.ef_search')")
        assert cursor.fetchone() == ("on", "40")


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("mode", ["dense", "hybrid"])
def test_a_search_outside_a_transaction_gets_its_settings_and_leaves_none(
    settings, notebook, crowded, mode
):
    # A request answering a question is in no transaction: the settings and the ranking
    # statement go to the server as one message. The iterative scan must still apply (as in
    # test_the_notebook_filter_does_not_starve_the_index) and end with that message.
    settings.RETRIEVAL_HNSW_EF_SEARCH = 10
    settings.RETRIEVAL_EXACT_MAX_CHUNKS = 0
    assert not connection.in_atomic_block

    if mode == "dense":
        hits = search_notebook(notebook=notebook, query_vector=crowded, model=MODEL, k=8)
    else:
        hits = search_notebook_hybrid(
            notebook=notebook, question="herons", query_vector=crowded, model=MODEL, k=8
        )

    assert len(hits) == 8
    assert ours_only(hits)
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('enable_sort'), current_setting('hnsw.ef_search')")
        assert cursor.fetchone() == ("on", "40")


def ef_search_of_the_search(notebook, query, *, model=MODEL) -> str:
    """Run a search, then its settings statement as it ran: the ef_search it set."""
    settings_query, _, _ = sent_statements(
        lambda: search_notebook(notebook=notebook, query_vector=query, model=model)
    )
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(settings_query)
        cursor.execute("SELECT current_setting('hnsw.ef_search')")
        (ef_search,) = cursor.fetchone()
        transaction.set_rollback(True)
    return ef_search


def test_ef_search_follows_the_size_of_the_models_index(settings, monkeypatch, notebook, crowded):
    settings.RETRIEVAL_HNSW_EF_SEARCH = 400
    settings.RETRIEVAL_EXACT_MAX_CHUNKS = 0
    # The model's index holds 1,540 rows (both owners' chunks), as ANALYZE counted them.
    monkeypatch.setattr(search, "SMALL_INDEX_ROWS", 1_540)
    assert ef_search_of_the_search(notebook, crowded) == str(search.SMALL_INDEX_EF_SEARCH)

    monkeypatch.setattr(search, "SMALL_INDEX_ROWS", 1_539)
    assert ef_search_of_the_search(notebook, crowded) == "400"

    # A model with no index (never counted) keeps the setting.
    monkeypatch.setattr(search, "SMALL_INDEX_ROWS", 10**9)
    assert ef_search_of_the_search(notebook, crowded, model="unindexed") == "400"

    # The setting stays the most: a small index never searches with more than it.
    settings.RETRIEVAL_HNSW_EF_SEARCH = 10
    assert ef_search_of_the_search(notebook, crowded) == "10"
