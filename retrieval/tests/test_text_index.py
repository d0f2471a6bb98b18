"""A GIN index over the full-text vectors per embedding model, beside its HNSW index: made
with the first vectors, by migration for every model present, by the reembed switch and by
`manage.py reembed --index`, dropped with the old model's; the hybrid search's full-text
side reads it, and never another model's."""

from __future__ import annotations

import importlib
import io
import itertools

import pytest
from django.apps import apps
from django.contrib.postgres.search import SearchVector
from django.core.management import call_command
from django.db import connection

from library import vector_indexes
from library.models import Chunk, Source
from notebooks.models import Notebook, NotebookSource
from providers import embeddings
from retrieval import search as search_module
from retrieval.reembed import run_reembed, start_reembed
from retrieval.search import search_notebook_hybrid
from retrieval.tests.indexes import TEXT, cte_plan, explain_as_run, plan_of_the_ranking_statement

_hashes = itertools.count(90_000)
OURS, THEIRS = "ours-3", "theirs-3"
RARE = "zygomorphic"


@pytest.fixture(autouse=True)
def no_model_indexes(db):
    """Start without any model's index (committed tests leave theirs behind); dropped inside
    this test's transaction, they come back when it rolls back."""
    with connection.cursor() as cursor:
        for name in vector_indexes.vector_indexes() + vector_indexes.text_indexes():
            cursor.execute(f"DROP INDEX {name}")
    vector_indexes._known.clear()


def text_index_exists(model: str) -> bool:
    return bool(vector_indexes.index_is_valid(vector_indexes.text_index_name(model=model)))


def make_source(notebook: Notebook, *, model: str, chunks: int, rare_every: int) -> Source:
    """`chunks` chunks of `model`, one in `rare_every` holding the rare word."""
    source = Source.objects.create(
        owner=notebook.owner,
        kind=Source.Kind.TEXT,
        title=model,
        filename=f"{model}.txt",
        sha256=f"{next(_hashes):064x}",
        status=Source.Status.READY,
        chunk_count=chunks,
        search_config="english",
    )
    NotebookSource.objects.create(notebook=notebook, source=source, added_by=notebook.owner)
    Chunk.objects.bulk_create(
        Chunk(
            source=source,
            ordinal=n,
            text=f"{model} passage {n}: reeds grow in the shallow water"
            + (f", orchids bear {RARE} blossoms" if n % rare_every == 0 else ""),
            char_start=0,
            char_end=1,
            embedding=[1.0, n / chunks, 0.0],
            embedding_model=model,
        )
        for n in range(chunks)
    )
    Chunk.objects.filter(source=source).update(search_vector=SearchVector("text", config="english"))
    return source


@pytest.fixture
def two_models(owner, outsider, notebook):
    """Our notebook of 3,000 chunks of one model, another owner's 3,000 of another model in
    the same table (as during the benchmark, or a database holding a bench set), both
    models indexed, statistics taken."""
    # Indexes first, as with a model's first vectors. Built in this transaction after the
    # chunks, an index is unusable until it ends whenever the full-text vectors' UPDATE
    # left a HOT chain (pg_index.indcheckxmin), which depends on the free space that
    # earlier tests' rolled-back rows left in the table's pages.
    for model in (OURS, THEIRS):
        vector_indexes.ensure_model_indexes(model=model, dimensions=3)
    make_source(notebook, model=OURS, chunks=3_000, rare_every=300)
    theirs = Notebook.objects.create(owner=outsider, title="Theirs")
    make_source(theirs, model=THEIRS, chunks=3_000, rare_every=3)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE library_chunk")  # rolled back with the test
    return notebook


def ask_for_the_rare_word(notebook: Notebook):
    """A hybrid search with a query vector far from every chunk: the full text finds them."""
    return search_notebook_hybrid(
        notebook=notebook,
        question=f"Which orchids bear {RARE} blossoms?",
        query_vector=[0.0, 0.0, 1.0],
        model=OURS,
        k=8,
    )


def plan_with_only_full_text_indexes(search) -> str:
    """EXPLAIN ANALYZE the ranking statement of `search` as it ran, with the other ways to
    the model's chunks out of the way (sequential scans off, the model's btree index dropped
    in this rolled-back transaction): at a few thousand rows the planner may rightly prefer
    those, while at 100k chunks it picks the GIN index by itself. So the
    plan shows which full-text index the statement can use at all."""
    by_model = next(
        i.name for i in Chunk._meta.indexes if i.fields == ["embedding_model", "source"]
    )
    plan = "\n".join(
        explain_as_run(search, first=[f"DROP INDEX {by_model}", "SET LOCAL enable_seqscan = off"])
    )
    return plan


def full_text_scans(plan: str) -> dict[str, bool]:
    """Each GIN index the plan reads: whether it ran."""
    scans: dict[str, bool] = {}
    for line in plan.splitlines():
        if "Bitmap Index Scan on " + vector_indexes.TEXT_PREFIX in line:
            name = line.split("Bitmap Index Scan on ")[1].split()[0]
            scans[name] = scans.get(name, False) or "never executed" not in line
    return scans


@pytest.mark.parametrize("large", [False, True])
def test_the_full_text_side_reads_its_models_index_only(settings, two_models, large):
    # Both branches: a notebook at or below RETRIEVAL_EXACT_MAX_CHUNKS tests its own chunks
    # for every lexeme of the question (with the other ways out of the way, through the
    # index), a larger one matches the rarest ones through the index.
    settings.RETRIEVAL_EXACT_MAX_CHUNKS = 100 if large else 10**6

    def search():
        return ask_for_the_rare_word(two_models)

    plan = plan_with_only_full_text_indexes(search)

    assert full_text_scans(plan) == {vector_indexes.text_index_name(model=OURS): True}, plan
    hits = search()
    # Far from the query vector, so found by the full text: our ten chunks with the word.
    assert sum(RARE in hit.chunk.text for hit in hits) == 8
    assert all(hit.chunk.embedding_model == OURS for hit in hits)


@pytest.mark.parametrize("large", [True, False])
def test_a_notebooks_full_text_index_is_read_once_whatever_its_sources(
    settings, owner, outsider, notebook, large
):
    # A notebook of many sources (the bench's: 90 or 10 of 1,000 chunks). Matched in the
    # same step as the sources are joined, the planner could run the index scan once per
    # source, most of the search's time in a large notebook; it must be one bitmap scan
    # ANDed with the sources'.
    for model in (OURS, THEIRS):
        vector_indexes.ensure_model_indexes(model=model, dimensions=3)
    for _ in range(12):
        make_source(notebook, model=OURS, chunks=250, rare_every=50)
    make_source(
        Notebook.objects.create(owner=outsider, title="Theirs"),
        model=OURS,
        chunks=250,
        rare_every=5,
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE library_chunk")
    settings.RETRIEVAL_EXACT_MAX_CHUNKS = 100 if large else 10**6

    def search():
        return ask_for_the_rare_word(notebook)

    plan = plan_with_only_full_text_indexes(search)
    # The chunks are matched in one scan (the planner picks which index, or two ANDed); a
    # large notebook's in one per set it reads in turn (hybrid.sql, `index_matches`: at most
    # the whole question's, all but the chosen words', the chosen words'), whatever its sources.
    matching = cte_plan(plan, "index_matches" if large else "notebook_matches")
    ran = [
        line
        for line in matching
        if " on library_chunk" in line and "Scan" in line and "never executed" not in line
    ]
    loops = [int(line.split("loops=")[1].rstrip(")")) for line in ran]
    assert ran and max(loops) <= (3 if large else 1), plan
    if large:
        ours = vector_indexes.text_index_name(model=OURS)
        assert any(f"Bitmap Index Scan on {ours}" in line for line in ran), plan
    hits = search()
    # Only this notebook's chunks with the rare word (60 of them), none of the other's 50.
    assert len(hits) == 8 and all(RARE in hit.chunk.text for hit in hits)
    assert {hit.chunk.source.notebooksource_set.get().notebook_id for hit in hits} == {notebook.pk}


@pytest.mark.parametrize("question", [RARE, f"Which orchids bear {RARE} blossoms?", "reeds"])
def test_a_small_notebook_tests_its_own_chunks_and_ranks_as_through_the_index(
    settings, monkeypatch, two_models, question
):
    def search():
        return search_notebook_hybrid(
            notebook=two_models, question=question, query_vector=[0.0, 0.0, 1.0], model=OURS
        )

    # A budget beyond the notebook's matches: the large branch matches on every word.
    monkeypatch.setattr(search_module, "LEXICAL_BUDGET", 10**6)
    settings.RETRIEVAL_EXACT_MAX_CHUNKS = 2_999  # below the notebook's 3,000 chunks
    through_index = [(hit.chunk.pk, hit.similarity) for hit in search()]
    ours = vector_indexes.text_index_name(model=OURS)
    assert full_text_scans(plan_of_the_ranking_statement(search)) == {ours: True}

    # Up to the threshold the notebook's own chunks are tested (the planner may still read
    # the index for them when it expects few matches): the same passages, the same order.
    settings.RETRIEVAL_EXACT_MAX_CHUNKS = 3_000
    assert [(hit.chunk.pk, hit.similarity) for hit in search()] == through_index
    assert through_index


def test_without_its_models_index_the_search_reads_no_other_models(settings, two_models):
    with connection.cursor() as cursor:
        cursor.execute(f"DROP INDEX {vector_indexes.text_index_name(model=OURS)}")

    plan = plan_with_only_full_text_indexes(
        lambda: search_notebook_hybrid(
            notebook=two_models, question=RARE, query_vector=[0.0, 0.0, 1.0], model=OURS
        )
    )

    assert full_text_scans(plan) == {}, plan


def test_the_first_vectors_of_a_model_get_its_full_text_index(
    fake_openai, notebook, add_ready_source
):
    assert not text_index_exists("fake-embed")

    add_ready_source(notebook, b"Grey herons wait at the edge of the pond.")

    assert text_index_exists("fake-embed")
    assert vector_indexes.text_indexes() == [vector_indexes.text_index_name(model="fake-embed")]


def test_a_model_too_wide_for_hnsw_still_gets_its_full_text_index(db):
    assert vector_indexes.ensure_model_indexes(model="huge", dimensions=4_001) == [
        vector_indexes.text_index_name(model="huge")
    ]
    assert vector_indexes.ensure_model_indexes(model="huge", dimensions=4_001) == []


def test_the_migration_indexes_every_models_chunks_and_drops_the_global_index(two_models):
    with connection.cursor() as cursor:
        for model in (OURS, THEIRS):
            cursor.execute(f"DROP INDEX {vector_indexes.text_index_name(model=model)}")
    migration = importlib.import_module("library.migrations.0011_chunk_text_index_per_model")

    migration.index_every_models_full_text(apps, None)

    assert text_index_exists(OURS) and text_index_exists(THEIRS)
    # Applied to the test database: the index over every model's chunks is gone.
    assert vector_indexes.index_is_valid("chunk_search_vector_gin") is None


def test_reembed_indexes_the_new_models_full_text_before_it_switches_and_drops_the_old(
    fake_openai, settings, notebook, add_ready_source
):
    settings.CHUNK_TOKENS, settings.CHUNK_OVERLAP_TOKENS = 25, 0
    settings.MODEL_PRICES = {**settings.MODEL_PRICES, "fake-embed-2": {"input_per_million": "1"}}
    add_ready_source(notebook, TEXT)
    settings.EMBEDDING_MODEL, settings.EMBEDDING_DIMENSIONS = "fake-embed-2", 32
    start_reembed(model=embeddings.configured_model())
    seen = []

    run_reembed(
        batch_size=100, on_batch=lambda state: seen.append(text_index_exists("fake-embed-2"))
    )

    assert seen == [False]  # built after the vectors, before the switch
    assert vector_indexes.text_indexes() == [vector_indexes.text_index_name(model="fake-embed-2")]
    # The switch's UPDATE filled it: the new model's chunks are found through it.
    hits = search_notebook_hybrid(
        notebook=notebook,
        question="herons",
        query_vector=embeddings.embed_query(
            text="herons", user=None, model=embeddings.configured_model()
        ),
        model="fake-embed-2",
    )
    assert hits and all(hit.chunk.embedding_model == "fake-embed-2" for hit in hits)


def test_reembed_index_builds_the_active_models_full_text_index_when_missing(
    fake_openai, notebook, add_ready_source
):
    add_ready_source(notebook, b"Grey herons wait at the edge of the pond.")
    name = vector_indexes.text_index_name(model="fake-embed")
    with connection.cursor() as cursor:
        cursor.execute(f"DROP INDEX {name}")
    out = io.StringIO()

    call_command("reembed", "--index", stdout=out)

    assert text_index_exists("fake-embed")
    assert out.getvalue().splitlines()[0] == f"Built {name} (full text) for fake-embed."
