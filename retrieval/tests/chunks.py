"""Sources and chunks written straight into a notebook, with the vectors a test chooses,
and the searches over them: what the retrieval tests of ranking and slots share."""

from __future__ import annotations

import itertools
import math

import pytest
from django.contrib.postgres.search import SearchVector

from library.models import Chunk, Source
from notebooks.models import NotebookSource
from retrieval.search import search_notebook, search_notebook_hybrid

MODEL = "fake-embed"
QUERY = [1.0, 0.0, 0.0]
QUESTION = "Which plants have zygomorphic flowers?"
MODES = pytest.mark.parametrize("mode", ["dense", "hybrid"])
_hashes = itertools.count(10_000)


def make_source(
    notebook,
    *,
    kind=Source.Kind.TEXT,
    status=Source.Status.READY,
    title="doc",
    config="english",
) -> Source:
    source = Source.objects.create(
        owner=notebook.owner,
        kind=kind,
        title=title,
        filename=f"{title}.txt",
        sha256=f"{next(_hashes):064x}",
        file=f"sources/{title}.txt",
        status=status,
        language="en",
        search_config=config,
    )
    NotebookSource.objects.create(notebook=notebook, source=source)
    return source


def add_chunk(source, text, vector, *, model=MODEL) -> Chunk:
    chunk = Chunk.objects.create(
        source=source,
        ordinal=source.chunks.count(),
        text=text,
        char_start=0,
        char_end=len(text),
        embedding=vector,
        embedding_model=model,
    )
    Chunk.objects.filter(pk=chunk.pk).update(
        search_vector=SearchVector("text", config=source.search_config)
    )
    return chunk


def at(similarity: float) -> list[float]:
    """A vector with this cosine similarity to QUERY."""
    return [similarity, math.sqrt(1 - similarity**2), 0.0]


def add_chunks(source, similarities, *, text="{title} {n}") -> None:
    """One chunk per similarity to QUERY, and the source's chunk count as ingest writes it."""
    for n, similarity in enumerate(similarities):
        chunk = Chunk.objects.create(
            source=source,
            ordinal=n,
            text=text.format(title=source.title, n=n),
            char_start=0,
            char_end=1,
            embedding=at(similarity),
            embedding_model=MODEL,
        )
        Chunk.objects.filter(pk=chunk.pk).update(
            search_vector=SearchVector("text", config="english")
        )
    source.chunk_count = len(similarities)
    source.save(update_fields=["chunk_count"])


def hybrid(notebook, question=QUESTION, **options):
    options.setdefault("model", MODEL)
    return search_notebook_hybrid(
        notebook=notebook, question=question, query_vector=QUERY, **options
    )


def search(mode, notebook, *, question="herons", **options):
    """Search in either mode; the question is only read by the hybrid one."""
    options.setdefault("model", MODEL)
    if mode == "dense":
        return search_notebook(notebook=notebook, query_vector=QUERY, **options)
    return search_notebook_hybrid(
        notebook=notebook, question=question, query_vector=QUERY, **options
    )


def texts(hits) -> list[str]:
    return [hit.chunk.text for hit in hits]
