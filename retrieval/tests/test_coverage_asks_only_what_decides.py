"""The coverage judgement asks the database only for the signal that can decide, and judges
exactly as it would with both signals at hand."""

import dataclasses

import pytest
from django.db import connection

from library import embedding_state
from providers import embeddings
from retrieval import coverage, profiles
from retrieval.search import scope_params, search_notebook_hybrid

HERONS = b"Grey herons wait motionless at the edge of the pond until a fish swims past."
TRAINS = b"The night train to Vienna leaves the central station at eleven each evening."
QUESTIONS = ["Where do herons wait?", "When does the Roman empire fall?", "Vienna at eleven?"]


@pytest.fixture
def searched(fake_openai, owner, notebook, add_ready_source):
    add_ready_source(notebook, HERONS, "herons.txt")
    add_ready_source(notebook, TRAINS, "trains.txt")
    model = embedding_state.active()
    found = []
    for question in QUESTIONS:
        vector = embeddings.embed_query(question, user=owner, model=model)
        hits = search_notebook_hybrid(
            notebook=notebook, question=question, query_vector=vector, model=model.name
        )
        assert hits
        found.append((question, hits, vector))
    return model.name, found, scope_params(notebook=notebook)


def _with_threshold(monkeypatch, model: str, threshold: float | None) -> None:
    profile = dataclasses.replace(profiles.profile(model), covered_similarity=threshold)
    monkeypatch.setitem(profiles.PROFILES, model, profile)


def _judged(model, question, hits, vector, scope) -> tuple[coverage.Coverage, list[str]]:
    statements: list[str] = []

    def count(execute, sql, params, many, context):
        statements.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(count):
        judged = coverage.assess(
            question=question, hits=hits, query_vector=vector, model=model, scope=scope
        )
    return judged, statements


def _with_both_signals(similarity, words, threshold) -> bool:
    """The rule as retrieval/coverage.py's docstring states it."""
    if threshold is None or similarity is None:
        return words >= coverage.WORDS_FALLBACK
    return similarity >= threshold or words >= coverage.WORDS_COVER


def test_every_threshold_judges_as_both_signals_would(monkeypatch, searched):
    model, found, scope = searched
    for question, hits, vector in found:
        similarity, counts = coverage.signals(
            question=question, hits=hits, query_vector=vector, model=model, scope=scope
        )
        words = coverage.word_share(counts)
        assert similarity is not None
        for threshold in (None, 0.0, similarity - 1e-6, similarity + 1e-6, 1.5):
            _with_threshold(monkeypatch, model, threshold)
            judged, _statements = _judged(model, question, hits, vector, scope)
            assert judged.covered == _with_both_signals(similarity, words, threshold), (
                question,
                threshold,
            )


def test_a_similarity_that_covers_leaves_the_words_uncounted(monkeypatch, searched):
    model, found, scope = searched
    question, hits, vector = found[0]
    _with_threshold(monkeypatch, model, 0.0)

    judged, statements = _judged(model, question, hits, vector, scope)

    assert judged.covered and judged.words is None and judged.similarity is not None
    assert len(statements) == 1 and "tsvector" not in statements[0]


def test_a_model_without_a_threshold_is_judged_by_its_words_alone(monkeypatch, searched):
    model, found, scope = searched
    question, hits, vector = found[1]  # the Roman empire: words the sources never use
    _with_threshold(monkeypatch, model, None)

    judged, statements = _judged(model, question, hits, vector, scope)

    assert judged.similarity is None and judged.words is not None
    assert judged.words < coverage.WORDS_FALLBACK and not judged.covered
    assert len(statements) == 1 and "<=>" not in statements[0]  # no vector compared
