"""A remote model is asked for a source's vectors while its chunks are written (words first,
vectors after); each request billed once, taken or not (ingest/services/early_vectors.py)."""

from __future__ import annotations

import time

import pytest
from django.core.files.base import ContentFile

from billing.models import Usage
from ingest import chunk_rows
from ingest.services import add_source, process_source
from ingest.services.early_vectors import EarlyVectors, asked_early
from library import embedding_state
from library.models import Chunk, Source
from providers import embeddings, local_e5
from providers.tests.fake_openai import count_words

# Six chunks of 20 tokens.
WORDS = " ".join(f"heron{n} waits by the pond." for n in range(20)).encode()


@pytest.fixture
def six_chunks(settings):
    settings.CHUNK_TOKENS, settings.CHUNK_OVERLAP_TOKENS = 20, 0
    settings.EMBEDDING_BATCH_SIZE = 2


def add(notebook, content: bytes = WORDS) -> Source:
    upload = ContentFile(content, name="herons.txt")
    return add_source(owner=notebook.owner, notebook=notebook, upload=upload).source


def test_the_vectors_are_asked_for_before_the_chunks_are_written(
    fake_openai, notebook, six_chunks, monkeypatch
):
    insert_chunks = chunk_rows.insert_chunks
    asked_before_written = []

    def insert_once_asked(**kwargs):
        deadline = time.monotonic() + 10
        while not fake_openai.embedding_requests and time.monotonic() < deadline:
            time.sleep(0.01)
        asked_before_written.append(len(fake_openai.embedding_requests))
        insert_chunks(**kwargs)

    monkeypatch.setattr(chunk_rows, "insert_chunks", insert_once_asked)
    source = add(notebook)

    source = process_source(source_id=source.pk)

    assert asked_before_written[0] >= 1
    assert (source.status, source.stage) == (Source.Status.READY, "")
    assert source.chunk_count == 6
    assert not Chunk.objects.filter(source=source, embedding__isnull=True).exists()
    # Every chunk asked for once: nothing asked again after the early requests.
    inputs = [text for request in fake_openai.embedding_requests for text in request.body["input"]]
    assert sorted(inputs) == sorted(
        Chunk.objects.filter(source=source).values_list("text", flat=True)
    )


def test_early_vectors_are_the_model_s_vectors_of_each_chunk(fake_openai, notebook, six_chunks):
    source = process_source(source_id=add(notebook).pk)

    chunks = list(Chunk.objects.filter(source=source).order_by("ordinal"))
    expected = embeddings.embed_texts(
        [chunk.text for chunk in chunks], user=None, model=embedding_state.active()
    )
    assert [list(chunk.embedding) for chunk in chunks] == [
        pytest.approx(vector, rel=1e-6) for vector in expected
    ]


def test_each_early_request_is_billed_once_to_the_source(fake_openai, notebook, six_chunks):
    source = process_source(source_id=add(notebook).pk)

    requests = fake_openai.embedding_requests
    usage = Usage.objects.filter(kind="embedding", source=source)
    assert len(requests) == usage.count() == 3  # 2 + 2 + 2 chunks
    assert sum(row.input_tokens for row in usage) == sum(
        count_words(text) for request in requests for text in request.body["input"]
    )


@pytest.mark.django_db
def test_requests_answered_but_never_taken_are_billed_when_it_closes(fake_openai, owner, settings):
    settings.EMBEDDING_BATCH_SIZE = 1
    model = embedding_state.active()
    early = EarlyVectors(["one", "two", "three"], model=model, user=owner)

    assert early.take(["two"], model=model) is not None
    early.close()

    assert Usage.objects.filter(kind="embedding", user=owner).count() == 3


def test_a_job_that_hands_the_embedding_on_asks_for_nothing_early(
    fake_openai, notebook, six_chunks, settings
):
    settings.INGEST_EMBED_CHUNKS = 2
    source = add(notebook)

    source = process_source(source_id=source.pk, slice_seconds=0)  # no time to embed

    assert (source.status, source.stage) == (Source.Status.READY, Source.Stage.EMBEDDING)
    assert fake_openai.embedding_requests == []
    assert not Usage.objects.filter(kind="embedding").exists()


@pytest.mark.django_db
def test_a_local_model_or_one_with_windows_is_not_asked_early(fake_openai, owner, settings):
    with asked_early(
        ["a text"], model=embeddings.EmbeddingModel(local_e5.MODEL_NAME), user=owner
    ) as early:
        assert early is None
    settings.RETRIEVAL_WINDOWS = "on"
    with asked_early(["a text"], model=embedding_state.active(), user=owner) as early:
        assert early is None
    assert fake_openai.embedding_requests == []
