from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.models import User

from library import embedding_state
from library.models import Source
from notebooks.models import Notebook
from providers import embeddings
from retrieval import coverage, profiles
from retrieval.coverage import Coverage
from retrieval.search import Hit, scope_params, search_notebook, search_notebook_hybrid


def retrieve(
    *,
    user: User,
    notebook: Notebook,
    question: str,
    k: int | None = None,
    source: Source | None = None,
    sources: Sequence[int] | None = None,
) -> list[Hit]:
    """Embed the question (one metered call) and search the notebook, or only `source`
    (one of the notebook's: "Ask about this") with RETRIEVAL_K_ONE_SOURCE and no floor;
    only the sources ticked (`sources`, ids; None: all) either way."""
    hits, _vector, _model = _retrieve(
        user=user, notebook=notebook, question=question, k=k, source=source, sources=sources
    )
    return hits


@dataclass(frozen=True)
class Retrieved:
    hits: list[Hit]
    coverage: Coverage | None  # None: not assessed
    query_vector: list[float]  # the question's, by `model`
    model: str


def retrieve_assessed(
    *,
    user: User,
    notebook: Notebook,
    question: str,
    source: Source | None = None,
    sources: Sequence[int] | None = None,
    assess: bool = True,
) -> Retrieved:
    """retrieve, and whether its hits cover the question at all (retrieval/coverage.py; one
    more statement), unless `assess` is false (coverage None then); with the question's
    vector, for what else the answer compares with it."""
    hits, vector, model = _retrieve(
        user=user, notebook=notebook, question=question, source=source, sources=sources
    )
    scope = scope_params(
        notebook=notebook,
        source_id=source.pk if source is not None else None,
        sources=sources,
        reader=user.pk,
    )
    judged = (
        coverage.assess(question=question, hits=hits, query_vector=vector, model=model, scope=scope)
        if assess
        else None
    )
    return Retrieved(hits=hits, coverage=judged, query_vector=vector, model=model)


def _retrieve(
    *,
    user: User,
    notebook: Notebook,
    question: str,
    k: int | None = None,
    source: Source | None = None,
    sources: Sequence[int] | None = None,
) -> tuple[list[Hit], list[float], str]:
    """The hits, the question's vector and the model that made it.

    The question is embedded by the model it is searched with. Should `manage.py reembed`
    switch models between the two, the chunks no longer carry that model's vectors: the
    question is embedded again by the new one (a switch is rare; twice in a row, never)."""
    if source is not None:
        k = k or settings.RETRIEVAL_K_ONE_SOURCE
    for _attempt in range(2):
        model = embedding_state.active()
        vector = embeddings.embed_query(question, user=user, model=model)
        hits = search(
            notebook=notebook,
            question=question,
            query_vector=vector,
            k=k,
            source_id=source.pk if source is not None else None,
            sources=sources,
            model=model.name,
            reader=user.pk,
        )
        if hits or embedding_state.active_model() == model.name:
            break
    return hits, vector, model.name


def search(
    *,
    notebook: Notebook,
    question: str,
    query_vector: list[float],
    k: int | None = None,
    source_id: int | None = None,
    sources: Sequence[int] | None = None,
    model: str | None = None,
    reader: int | None = None,
) -> list[Hit]:
    """The search `retrieve` runs once the question is embedded: RETRIEVAL_MODE, the
    model that embedded it (None: the active one) and its floor decide. `manage.py
    evaluate` times it apart from the embedding. Searching one source (`source_id`) has
    no floor: everything it holds may be asked about."""
    model = model or embedding_state.active_model()
    floor = profiles.similarity_floor(model) if source_id is None else None
    if settings.RETRIEVAL_MODE == "hybrid":
        return search_notebook_hybrid(
            notebook=notebook,
            question=question,
            query_vector=query_vector,
            model=model,
            k=k,
            floor=floor,
            source_id=source_id,
            sources=sources,
            reader=reader,
        )
    return search_notebook(
        notebook=notebook,
        query_vector=query_vector,
        model=model,
        k=k,
        floor=floor,
        source_id=source_id,
        sources=sources,
        reader=reader,
    )
