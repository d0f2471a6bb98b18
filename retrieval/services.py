from __future__ import annotations

from django.contrib.auth.models import User

from notebooks.models import Notebook
from providers import embeddings
from retrieval.search import Hit, search_notebook


def retrieve(*, user: User, notebook: Notebook, question: str, k: int | None = None) -> list[Hit]:
    """Embed the question (one metered call) and search the notebook."""
    vector = embeddings.embed_query(question, user=user)
    return search_notebook(
        notebook=notebook,
        query_vector=vector,
        model=embeddings.active_model(),
        k=k,
        floor=embeddings.similarity_floor(),
    )
