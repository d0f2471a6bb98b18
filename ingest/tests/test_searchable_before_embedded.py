"""A source is searchable by its words as soon as it is read; its vectors fill in behind, in
slices that let a source added meanwhile go first."""

from __future__ import annotations

import pytest
from django.core.files.base import ContentFile
from django.urls import reverse
from procrastinate.contrib.django.models import ProcrastinateJob

from ingest.services import add_source, embedding, process_source
from library import embedding_state
from library.models import Chunk, Source
from ops.worker import drain_queue
from providers import embeddings
from retrieval.services import search

OTTERS = b"Sea otters hold hands while they sleep so that they do not drift apart."


def words(prefix: str, count: int) -> bytes:
    return " ".join(f"{prefix}{n}" for n in range(count)).encode()


# Two chunks with `longer_than_a_batch`: a source of one batch is finished by the job that
# read it, so these are what a job with no time to spare hands on.
OTTERS_AND_MORE = OTTERS + b" " + words("more", 25)


@pytest.fixture
def longer_than_a_batch(settings):
    settings.CHUNK_TOKENS, settings.CHUNK_OVERLAP_TOKENS = 20, 0
    settings.INGEST_EMBED_CHUNKS = 1


def add(notebook, content: bytes, name: str) -> Source:
    upload = ContentFile(content, name=name)
    return add_source(owner=notebook.owner, notebook=notebook, upload=upload).source


def read_then_embed(source: Source) -> None:
    """Read by a job with no time to spare, then embedded by the job it hands on: every
    batch asks the model (the reading job asks for none early)."""
    process_source(source_id=source.pk, slice_seconds=0)
    process_source(source_id=source.pk)


def test_a_source_read_but_not_yet_embedded_is_found_by_its_words(
    fake_openai, notebook, longer_than_a_batch
):
    source = add(notebook, OTTERS_AND_MORE, "otters.txt")

    # A job with no time to spare: it reads, writes and hands the embedding on.
    source = process_source(source_id=source.pk, slice_seconds=0)

    assert (source.status, source.stage) == (Source.Status.READY, Source.Stage.EMBEDDING)
    assert not source.is_finished
    assert Chunk.objects.filter(source=source, embedding__isnull=True).count() == 2
    assert ProcrastinateJob.objects.filter(
        args={"source_id": source.pk}, status="todo", priority=-1
    ).exists()
    question = "Why do otters hold hands?"
    vector = embeddings.embed_query(question, user=notebook.owner, model=embedding_state.active())
    hits = search(notebook=notebook, question=question, query_vector=vector)
    assert [hit.chunk.source_id for hit in hits] == [source.pk]
    assert hits[0].similarity == 0  # no vector yet: found by its words alone


def test_the_rest_of_the_embedding_finishes_the_source(fake_openai, notebook, longer_than_a_batch):
    source = add(notebook, OTTERS_AND_MORE, "otters.txt")
    process_source(source_id=source.pk, slice_seconds=0)

    source = process_source(source_id=source.pk)

    assert (source.status, source.stage) == (Source.Status.READY, "")
    assert source.is_finished
    assert not Chunk.objects.filter(source=source, embedding__isnull=True).exists()
    assert source.progress_done == source.progress_total == 2


def test_the_notebook_page_says_the_source_is_searchable_while_it_is_embedded(
    fake_openai, client, notebook, longer_than_a_batch
):
    source = add(notebook, OTTERS_AND_MORE, "otters.txt")
    process_source(source_id=source.pk, slice_seconds=0)
    client.force_login(notebook.owner)

    page = client.get(reverse("notebooks:detail", args=[notebook.pk])).content.decode()

    assert "searchable by its words · embedding 0/2 chunks" in page


@pytest.mark.django_db(transaction=True)
def test_a_small_source_added_behind_a_long_one_is_embedded_before_the_long_one(
    fake_openai, settings, notebook
):
    settings.CHUNK_TOKENS, settings.CHUNK_OVERLAP_TOKENS = 20, 0
    settings.INGEST_EMBED_CHUNKS, settings.EMBEDDING_BATCH_SIZE = 2, 2
    # Time to spare: the long one yields because the small one waits, not because its
    # slice is over.
    settings.INGEST_SLICE_SECONDS = 60
    long = add(notebook, words("long", 400), "long.txt")
    small = add(notebook, OTTERS, "otters.txt")

    drain_queue()  # a real worker, as in production

    long.refresh_from_db()
    small.refresh_from_db()
    assert (long.status, long.stage, small.status, small.stage) == ("ready", "", "ready", "")
    inputs = [" ".join(request.body["input"]) for request in fake_openai.embedding_requests]
    # The long source is read (searchable at once), then the small one goes first.
    assert "otters" in inputs[0]
    assert all("long" in text for text in inputs[1:])
    assert Chunk.objects.filter(source=long).count() == long.chunk_count == 20
    assert not Chunk.objects.filter(embedding__isnull=True).exists()


def test_a_job_embedding_a_long_source_yields_after_a_batch_when_another_source_waits(
    fake_openai, settings, notebook
):
    settings.CHUNK_TOKENS, settings.CHUNK_OVERLAP_TOKENS = 20, 0
    settings.INGEST_EMBED_CHUNKS, settings.EMBEDDING_BATCH_SIZE = 2, 2
    long = add(notebook, words("long", 400), "long.txt")
    process_source(source_id=long.pk, slice_seconds=0)  # read; the embedding handed on
    add(notebook, OTTERS, "otters.txt")  # arrives while the long one is embedded

    long = process_source(source_id=long.pk, slice_seconds=60)

    # One batch (a job that only embeds does at least one), then the rest is handed on.
    assert Chunk.objects.filter(source=long, embedding__isnull=False).count() == 2
    assert (long.status, long.stage) == ("ready", "embedding")
    assert (
        ProcrastinateJob.objects.filter(
            args={"source_id": long.pk}, status="todo", priority=-1
        ).count()
        == 2
    )  # the one handed on before, and this one's


def test_a_source_that_fits_in_one_batch_is_finished_by_the_job_that_read_it(
    fake_openai, settings, notebook
):
    first = add(notebook, OTTERS, "otters.txt")
    add(notebook, b"Another note that waits its turn.", "other.txt")

    first = process_source(source_id=first.pk, slice_seconds=60)

    assert (first.status, first.stage) == ("ready", "")
    assert not Chunk.objects.filter(source=first, embedding__isnull=True).exists()
    assert not ProcrastinateJob.objects.filter(args={"source_id": first.pk}, priority=-1).exists()


def test_a_batch_that_takes_long_makes_the_next_smaller(
    fake_openai, settings, notebook, monkeypatch
):
    settings.CHUNK_TOKENS, settings.CHUNK_OVERLAP_TOKENS = 20, 0
    settings.INGEST_EMBED_CHUNKS, settings.EMBEDDING_BATCH_SIZE = 8, 64
    # Every batch counts as slow (past SLOW_BATCH_SECONDS, however fast): the next one is as
    # small as it gets.
    monkeypatch.setattr(embedding, "FAST_BATCH_SECONDS", -1.0)
    monkeypatch.setattr(embedding, "SLOW_BATCH_SECONDS", -1.0)
    long = add(notebook, words("long", 400), "long.txt")

    read_then_embed(long)

    sizes = [len(request.body["input"]) for request in fake_openai.embedding_requests]
    assert sizes == [8] + [1] * 12


def test_the_next_job_starts_with_the_batch_size_the_last_one_reached(
    fake_openai, settings, notebook, monkeypatch
):
    settings.CHUNK_TOKENS, settings.CHUNK_OVERLAP_TOKENS = 20, 0
    settings.INGEST_EMBED_CHUNKS, settings.EMBEDDING_BATCH_SIZE = 8, 64
    monkeypatch.setattr(embedding, "FAST_BATCH_SECONDS", -1.0)
    monkeypatch.setattr(embedding, "SLOW_BATCH_SECONDS", -1.0)
    first = add(notebook, words("first", 300), "first.txt")
    read_then_embed(first)  # 8 chunks, then one at a time
    before = len(fake_openai.embedding_requests)
    second = add(notebook, words("second", 200), "second.txt")

    read_then_embed(second)

    sizes = [len(request.body["input"]) for request in fake_openai.embedding_requests[before:]]
    assert sizes == [1] * 10


def test_a_batch_that_was_not_full_does_not_grow_the_next(
    fake_openai, settings, notebook, monkeypatch
):
    settings.CHUNK_TOKENS, settings.CHUNK_OVERLAP_TOKENS = 20, 0
    settings.INGEST_EMBED_CHUNKS, settings.EMBEDDING_BATCH_SIZE = 8, 64
    monkeypatch.setattr(embedding, "FAST_BATCH_SECONDS", 1000.0)  # every batch counts as fast
    small = add(notebook, OTTERS, "otters.txt")
    read_then_embed(small)  # one chunk: fast, but says nothing of eight
    before = len(fake_openai.embedding_requests)
    long = add(notebook, words("long", 400), "long.txt")

    read_then_embed(long)

    sizes = [len(request.body["input"]) for request in fake_openai.embedding_requests[before:]]
    assert sizes == [8, 12]
