import itertools

import pytest
from django.db import connection

from billing.models import Usage
from library.models import Chunk, Source
from notebooks.models import Notebook, NotebookSource
from retrieval.search import search_notebook, search_notebook_hybrid
from retrieval.services import retrieve

MODEL = "fake-embed"
QUERY = [1.0, 0.0, 0.0]
_hashes = itertools.count()


def make_source(notebook, *, status=Source.Status.READY, owner=None, title="doc") -> Source:
    source = Source.objects.create(
        owner=owner or notebook.owner,
        kind=Source.Kind.TEXT,
        title=title,
        filename=f"{title}.txt",
        sha256=f"{next(_hashes):064x}",
        file=f"sources/{title}.txt",
        status=status,
    )
    NotebookSource.objects.create(notebook=notebook, source=source)
    return source


def add_chunk(source, vector, *, text="", model=MODEL) -> Chunk:
    ordinal = source.chunks.count()
    return Chunk.objects.create(
        source=source,
        ordinal=ordinal,
        text=text or f"{source.title} #{ordinal}",
        char_start=0,
        char_end=1,
        embedding=vector,
        embedding_model=model,
    )


def texts(hits) -> list[str]:
    return [hit.chunk.text for hit in hits]


def test_only_the_notebooks_ready_sources_are_searched(owner, outsider, notebook):
    add_chunk(make_source(notebook, title="ready"), QUERY)
    for status in (Source.Status.QUEUED, Source.Status.PROCESSING, Source.Status.FAILED):
        add_chunk(make_source(notebook, status=status, title=status), QUERY)
    elsewhere = Notebook.objects.create(owner=owner, title="Elsewhere")
    add_chunk(make_source(elsewhere, title="other-notebook"), QUERY)
    theirs = Notebook.objects.create(owner=outsider, title="Research")
    add_chunk(make_source(theirs, title="outsiders"), QUERY)

    hits = search_notebook(notebook=notebook, query_vector=QUERY, model=MODEL)

    assert texts(hits) == ["ready #0"]


def test_a_source_in_two_notebooks_is_found_once_in_each(owner, notebook):
    source = make_source(notebook, title="shared")
    add_chunk(source, QUERY)
    second = Notebook.objects.create(owner=owner, title="Second")
    NotebookSource.objects.create(notebook=second, source=source)

    assert texts(search_notebook(notebook=notebook, query_vector=QUERY, model=MODEL)) == [
        "shared #0"
    ]
    assert texts(search_notebook(notebook=second, query_vector=QUERY, model=MODEL)) == ["shared #0"]


def test_vectors_of_another_embedding_model_are_never_returned(notebook):
    source = make_source(notebook)
    add_chunk(source, QUERY, text="ours")
    add_chunk(source, QUERY, text="same vector, other model", model="old-model")
    # Another model's vectors may even have another length; they must not be compared.
    add_chunk(source, [1.0, 0.0, 0.0, 0.0], text="four dimensions", model="big-model")

    hits = search_notebook(notebook=notebook, query_vector=QUERY, model=MODEL)

    assert texts(hits) == ["ours"]


def test_results_come_best_first_and_at_most_k(notebook):
    source = make_source(notebook)
    for text, vector in [
        ("orthogonal", [0.0, 1.0, 0.0]),
        ("close", [1.0, 1.0, 0.0]),
        ("same", [2.0, 0.0, 0.0]),
        ("opposite", [-1.0, 0.0, 0.0]),
        ("farther", [1.0, 2.0, 0.0]),
    ]:
        add_chunk(source, vector, text=text)

    every = search_notebook(notebook=notebook, query_vector=QUERY, model=MODEL, k=10)
    top = search_notebook(notebook=notebook, query_vector=QUERY, model=MODEL, k=3)

    assert texts(every) == ["same", "close", "farther", "orthogonal", "opposite"]
    assert [hit.similarity for hit in every] == pytest.approx([1.0, 0.5**0.5, 0.2**0.5, 0.0, -1.0])
    assert texts(top) == ["same", "close", "farther"]


def test_k_defaults_to_the_setting(notebook, settings):
    settings.RETRIEVAL_K = 2
    source = make_source(notebook)
    for _ in range(4):
        add_chunk(source, QUERY)

    assert len(search_notebook(notebook=notebook, query_vector=QUERY, model=MODEL)) == 2


def test_the_floor_filters_weak_matches(notebook):
    source = make_source(notebook)
    add_chunk(source, [1.0, 0.0, 0.0], text="same")
    add_chunk(source, [1.0, 1.0, 0.0], text="close")
    add_chunk(source, [1.0, 2.0, 0.0], text="farther")

    hits = search_notebook(notebook=notebook, query_vector=QUERY, model=MODEL, floor=0.5)

    assert texts(hits) == ["same", "close"]
    assert all(hit.similarity >= 0.5 for hit in hits)


def test_an_empty_notebook_has_no_hits(notebook):
    assert search_notebook(notebook=notebook, query_vector=QUERY, model=MODEL) == []


def test_retrieve_embeds_the_question_once_and_searches_with_the_active_model(
    fake_openai, owner, notebook, add_ready_source, settings
):
    settings.SIMILARITY_FLOOR = 0.3
    add_ready_source(notebook, b"Grey herons wait at the edge of the pond.", "herons.txt")
    add_ready_source(notebook, b"Sourdough bread needs a starter.", "bread.txt")
    stale = make_source(notebook, title="stale")
    add_chunk(stale, [1.0] * 64, text="from the old model", model="old-model")
    Usage.objects.all().delete()

    hits = retrieve(user=owner, notebook=notebook, question="Where do grey herons wait?")

    assert texts(hits) == ["Grey herons wait at the edge of the pond."]
    assert fake_openai.embedding_requests[-1].body["input"] == ["Where do grey herons wait?"]
    assert Usage.objects.get().kind == "embedding"


@pytest.mark.parametrize("mode", ["dense", "hybrid"])
def test_the_ranking_statement_loads_the_hits_with_their_sources(notebook, mode):
    source = make_source(notebook, title="herons")
    Source.objects.filter(pk=source.pk).update(
        reader="pypdf", reader_i18n={"msgid": "read by %(name)s", "params": {"name": "pypdf"}}
    )
    add_chunk(source, [1.0, 0.2, 0.0], text="Herons wait at the pond.")
    add_chunk(source, [0.0, 1.0, 0.0], text="Trains run on time.")

    # The search's settings and its statement, which reads the chunks and their sources too
    # (in a test's transaction inside a savepoint; outside one, both go in one pipeline).
    sent: list[str] = []

    def keep(execute, sql, params, many, context):
        sent.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(keep):
        if mode == "dense":
            hits = search_notebook(notebook=notebook, query_vector=QUERY, model=MODEL)
        else:
            hits = search_notebook_hybrid(
                notebook=notebook,
                question="Where do herons wait?",
                query_vector=QUERY,
                model=MODEL,
            )
        first = hits[0].chunk
        assert first.text == "Herons wait at the pond."
        assert (first.ordinal, first.char_start, first.embedding_model) == (0, 0, MODEL)
        assert first.source.title == "herons"
        assert first.source.reader_i18n == {
            "msgid": "read by %(name)s",
            "params": {"name": "pypdf"},
        }
        assert first.source.file.name == "sources/herons.txt"
        assert first.source.created_at.tzinfo is not None

    run = [sql for sql in sent if not sql.startswith(("SAVEPOINT", "RELEASE", "ROLLBACK"))]
    assert len(run) == 2 and "SELECT set_config" in run[0], run
    assert [hit.chunk.pk for hit in hits] == [c.pk for c in source.chunks.order_by("ordinal")]
    # The vectors were left out; read, they load as Django's own deferred fields do.
    assert list(first.embedding) == pytest.approx([1.0, 0.2, 0.0])


@pytest.mark.parametrize("mode", ["dense", "hybrid"])
def test_a_model_name_with_quotes_is_written_into_the_statement_safely(notebook, mode):
    # The model is part of the statement's text (retrieval/search.py, `render`), not a
    # parameter: a name with a quote must search its own vectors and nothing else.
    model = "o'brien/emb'; DROP TABLE library_chunk; --"
    source = make_source(notebook, title="quoted")
    add_chunk(source, QUERY, text="Herons by the pond.", model=model)
    add_chunk(source, QUERY, text="The other model's chunk.", model=MODEL)

    if mode == "dense":
        hits = search_notebook(notebook=notebook, query_vector=QUERY, model=model)
    else:
        hits = search_notebook_hybrid(
            notebook=notebook, question="herons", query_vector=QUERY, model=model
        )

    assert texts(hits) == ["Herons by the pond."]
    assert Chunk.objects.count() == 2


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("mode", ["dense", "hybrid"])
def test_each_statement_is_planned_once_per_connection(notebook, mode):
    # Outside a transaction (as a request answering a question runs it), the ranking
    # statement is prepared on the connection and every later search runs on the plan made
    # for it once (plan_cache_mode), for any values: the notebook's own and the question's.
    source = make_source(notebook, title="herons")
    add_chunk(source, [1.0, 0.2, 0.0], text="Herons wait at the pond.")
    add_chunk(source, [0.0, 1.0, 0.0], text="Trains run on time.")
    assert not connection.in_atomic_block

    def search(vector, question):
        if mode == "dense":
            return search_notebook(notebook=notebook, query_vector=vector, model=MODEL)
        return search_notebook_hybrid(
            notebook=notebook, question=question, query_vector=vector, model=MODEL
        )

    def plans() -> tuple[int, int]:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT coalesce(sum(generic_plans), 0), coalesce(sum(custom_plans), 0)"
                " FROM pg_prepared_statements WHERE statement LIKE %s",
                [f"-- The {mode} search%"],
            )
            return cursor.fetchone()

    before = plans()
    first = search([1.0, 0.0, 0.0], "Where do herons wait?")
    second = search([0.0, 1.0, 0.0], "When do the trains run?")
    after = plans()

    assert texts(first)[0] == "Herons wait at the pond."
    assert texts(second)[0] == "Trains run on time."
    assert (after[0] - before[0], after[1] - before[1]) == (2, 0)  # two runs, no new plan
    with connection.cursor() as cursor:
        # The settings ended with each search.
        cursor.execute("SELECT current_setting('enable_sort'), current_setting('plan_cache_mode')")
        assert cursor.fetchone() == ("on", "auto")


@pytest.mark.django_db(transaction=True)
def test_a_failing_search_raises_djangos_error_and_leaves_the_connection_usable(
    notebook, monkeypatch
):
    # The pipeline's error comes out as Django's own exception class (as from any query),
    # and the connection is not left mid-pipeline or in a failed transaction.
    from django.db.utils import ProgrammingError

    from retrieval import search

    add_chunk(make_source(notebook, title="herons"), QUERY, text="Herons wait at the pond.")
    monkeypatch.setattr(search, "DENSE_SQL", "SELECT * FROM no_such_table WHERE %(floor)s > 0")

    with pytest.raises(ProgrammingError, match="no_such_table"):
        search_notebook(notebook=notebook, query_vector=QUERY, model=MODEL)

    monkeypatch.undo()
    hits = search_notebook(notebook=notebook, query_vector=QUERY, model=MODEL)
    assert texts(hits) == ["Herons wait at the pond."]
    assert Chunk.objects.count() == 1
