"""The word share drops the question's own stop words, in the question's language: a
question asked of a sheet whose language could not be told (stemmed by 'simple', which drops
no word), or of sources in another language, does not count its "what", "is" and "the" as
words its passages lack."""

from __future__ import annotations

import dataclasses

import pytest
from django.db import connection

from library import embedding_state
from providers import embeddings
from retrieval import coverage, profiles
from retrieval.search import scope_params, search_notebook_hybrid

CITIES = b"city,population,state\nSpringfield,30720,Oregon\nSalem,175535,Oregon\n"


@pytest.fixture
def sheet(fake_openai, monkeypatch, notebook, add_ready_source):
    source = add_ready_source(notebook, CITIES, "cities.csv")
    # Rows of names and numbers tell no language: such a sheet is stemmed by 'simple'.
    source.search_config = "simple"
    source.save(update_fields=["search_config"])
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE library_chunk SET search_vector = to_tsvector('simple', text) "
            "WHERE source_id = %s",
            [source.pk],
        )
    model = embedding_state.active().name
    # Whatever the similarity, the words decide, as they do for short slides and row blocks.
    profile = dataclasses.replace(profiles.profile(model), covered_similarity=1.01)
    monkeypatch.setitem(profiles.PROFILES, model, profile)
    return notebook


def _judged(owner, notebook, question: str) -> coverage.Coverage:
    model = embedding_state.active()
    vector = embeddings.embed_query(question, user=owner, model=model)
    hits = search_notebook_hybrid(
        notebook=notebook, question=question, query_vector=vector, model=model.name
    )
    assert hits
    return coverage.assess(
        question=question,
        hits=hits,
        query_vector=vector,
        model=model.name,
        scope=scope_params(notebook=notebook),
    )


def test_a_question_about_a_sheet_stemmed_by_simple_is_covered_by_its_words(owner, sheet):
    judged = _judged(owner, sheet, "What is the population of Springfield?")

    assert judged.words == 1.0  # "population", "springfield"; not "what", "is", "the", "of"
    assert judged.covered


def test_a_german_question_drops_its_own_stop_words(owner, sheet):
    judged = _judged(owner, sheet, "Welche population hat Springfield?")

    assert judged.words == 1.0  # not "welche", "hat"
    assert judged.covered


def test_a_question_the_sheet_says_nothing_about_is_still_not_covered(owner, sheet):
    judged = _judged(owner, sheet, "Who painted the Mona Lisa?")

    assert judged.words == 0.0
    assert not judged.covered
