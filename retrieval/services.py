from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import User

from notebooks.models import Notebook
from providers import embeddings
from retrieval.search import Hit, search_notebook, search_notebook_hybrid


def retrieve(*, user: User, notebook: Notebook, question: str, k: int | None = None) -> list[Hit]:
    """Embed the question (one metered call) and search the notebook."""
    vector = embeddings.embed_query(question, user=user)
    return search(notebook=notebook, question=question, query_vector=vector, k=k)


def search(
    *, notebook: Notebook, question: str, query_vector: list[float], k: int | None = None
) -> list[Hit]:
    """The search `retrieve` runs once the question is embedded: RETRIEVAL_MODE, the active
    model and its floor decide. `manage.py evaluate` times it apart from the embedding."""
    model = embeddings.active_model()
    floor = embeddings.similarity_floor()
    if settings.RETRIEVAL_MODE == "hybrid":
        return search_notebook_hybrid(
            notebook=notebook,
            question=question,
            query_vector=query_vector,
            model=model,
            k=k,
            floor=floor,
        )
    return search_notebook(
        notebook=notebook, query_vector=query_vector, model=model, k=k, floor=floor
    )
