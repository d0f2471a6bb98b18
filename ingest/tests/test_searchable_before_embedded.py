"""A source is searchable by its words as soon as it is read; its vectors fill in behind, in
slices that let a source added meanwhile go first."""

from __future__ import annotations

import pytest
from django.core.files.base import ContentFile
from django.urls import reverse
from procrastinate.contrib.django.models import ProcrastinateJob

from ingest.services import add_source, process_source
from ingest.worker import drain_queue
from library.models import Chunk, Source
from providers import embeddings
from retrieval.services import search

OTTERS = b"Sea otters hold hands while they sleep so that they do not drift apart."


def words(prefix: str, count: int) -> bytes:
    return " ".join(f"{prefix}{n}" for n in range(count)).encode()


def add(notebook, content: bytes, name: str) -> Source:
    upload = ContentFile(content, name=name)
    return add_source(owner=notebook.owner, notebook=notebook, upload=upload).source


def test_a_source_read_but_not_yet_embedded_is_found_by_its_words(fake_openai, notebook):
    source = add(notebook, OTTERS, "otters.txt")

    # A job with no time to spare: it reads, writes and hands the embedding on.
    source = process_source(source_id=source.pk, slice_seconds=0)

    assert (source.status, source.stage) == (Source.Status.READY, Source.Stage.EMBEDDING)
    assert not source.is_finished
    assert Chunk.objects.filter(source=source, embedding__isnull=True).count() == 1
    assert ProcrastinateJob.objects.filter(
        args={"source_id": source.pk}, status="todo", priority=-1
    ).exists()
    question = "Why do otters hold hands?"
    vector = embeddings.embed_query(question, user=notebook.owner)
    hits = search(notebook=notebook, question=question, query_vector=vector)
    assert [hit.chunk.source_id for hit in hits] == [source.pk]
    assert hits[0].similarity == 0  # no vector yet: found by its words alone


def test_the_rest_of_the_embedding_finishes_the_source(fake_openai, notebook):
    source = add(notebook, OTTERS, "otters.txt")
    process_source(source_id=source.pk, slice_seconds=0)

    source = process_source(source_id=source.pk)

    assert (source.status, source.stage) == (Source.Status.READY, "")
    assert source.is_finished
    assert not Chunk.objects.filter(source=source, embedding__isnull=True).exists()
    assert source.progress_done == source.progress_total == 1


def test_the_notebook_page_says_the_source_is_searchable_while_it_is_embedded(
    fake_openai, client, notebook
):
    source = add(notebook, OTTERS, "otters.txt")
    process_source(source_id=source.pk, slice_seconds=0)
    client.force_login(notebook.owner)

    page = client.get(reverse("notebooks:detail", args=[notebook.pk])).content.decode()

    assert "searchable by its words · embedding 0/1 chunks" in page


@pytest.mark.django_db(transaction=True)
def test_a_small_source_added_behind_a_long_one_is_embedded_before_the_long_one_ends(
    fake_openai, settings, notebook
):
    settings.CHUNK_TOKENS, settings.CHUNK_OVERLAP_TOKENS = 20, 0
    settings.INGEST_EMBED_CHUNKS, settings.EMBEDDING_BATCH_SIZE = 2, 2
    settings.INGEST_SLICE_SECONDS = 0  # each job embeds one batch, then hands the rest on
    long = add(notebook, words("long", 400), "long.txt")
    small = add(notebook, OTTERS, "otters.txt")

    drain_queue()  # a real worker, as in production

    long.refresh_from_db()
    small.refresh_from_db()
    assert (long.status, long.stage, small.status, small.stage) == ("ready", "", "ready", "")
    inputs = [" ".join(request.body["input"]) for request in fake_openai.embedding_requests]
    small_at = next(n for n, text in enumerate(inputs) if "otters" in text)
    long_last = max(n for n, text in enumerate(inputs) if "long" in text)
    # The long source's first slice, then the small source, then the rest of the long one.
    assert 0 < small_at < long_last
    assert Chunk.objects.filter(source=long).count() == long.chunk_count == 20
    assert not Chunk.objects.filter(embedding__isnull=True).exists()
