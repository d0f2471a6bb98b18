from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import User

from library.models import Source
from notebooks.models import Notebook
from providers import embeddings
from retrieval.search import Hit, search_notebook, search_notebook_hybrid


def retrieve(
    *,
    user: User,
    notebook: Notebook,
    question: str,
    k: int | None = None,
    source: Source | None = None,
) -> list[Hit]:
    """Embed the question (one metered call) and search the notebook, or only `source`
    (one of the notebook's: "Ask about this") with RETRIEVAL_K_ONE_SOURCE and no floor."""
    vector = embeddings.embed_query(question, user=user)
    if source is not None:
        return search(
            notebook=notebook,
            question=question,
            query_vector=vector,
            k=k or settings.RETRIEVAL_K_ONE_SOURCE,
            source_id=source.pk,
        )
    return search(notebook=notebook, question=question, query_vector=vector, k=k)


def search(
    *,
    notebook: Notebook,
    question: str,
    query_vector: list[float],
    k: int | None = None,
    source_id: int | None = None,
) -> list[Hit]:
    """The search `retrieve` runs once the question is embedded: RETRIEVAL_MODE, the active
    model and its floor decide. `manage.py evaluate` times it apart from the embedding.
    Searching one source (`source_id`) has no floor: everything it holds may be asked about."""
    model = embeddings.active_model()
    floor = embeddings.similarity_floor() if source_id is None else None
    if settings.RETRIEVAL_MODE == "hybrid":
        return search_notebook_hybrid(
            notebook=notebook,
            question=question,
            query_vector=query_vector,
            model=model,
            k=k,
            floor=floor,
            source_id=source_id,
        )
    return search_notebook(
        notebook=notebook,
        query_vector=query_vector,
        model=model,
        k=k,
        floor=floor,
        source_id=source_id,
    )
