"""`manage.py reembed`: the old model serves until every chunk has the new vector, then
one switch; a search never meets two models' vectors, and never fails meanwhile."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from procrastinate.contrib.django.models import ProcrastinateJob

from library import embedding_state
from library.models import Chunk, ChunkEmbedding, EmbeddingState
from providers import embeddings
from retrieval import checks
from retrieval.reembed import NothingToDo, run_reembed, start_reembed
from retrieval.services import retrieve
from retrieval.tests.indexes import TEXT

QUESTION = "Where do grey herons wait?"


@pytest.fixture
def indexed(fake_openai, settings, notebook, add_ready_source):
    """A notebook of ten-odd chunks embedded by fake-embed (64 dimensions), and the
    settings then naming fake-embed-2 (32 dimensions)."""
    settings.CHUNK_TOKENS, settings.CHUNK_OVERLAP_TOKENS = 25, 0
    settings.MODEL_PRICES = {**settings.MODEL_PRICES, "fake-embed-2": {"input_per_million": "1"}}
    add_ready_source(notebook, TEXT)
    assert Chunk.objects.count() >= 8
    settings.EMBEDDING_MODEL, settings.EMBEDDING_DIMENSIONS = "fake-embed-2", 32
    return notebook


def embedded_texts(fake_openai, model: str) -> list[str]:
    return [
        text
        for request in fake_openai.embedding_requests
        if request.body["model"] == model
        for text in request.body["input"]
    ]


def test_the_first_vectors_pin_the_model_until_reembed_switches(indexed):
    assert embedding_state.active() == embeddings.EmbeddingModel("fake-embed", 64)
    warnings = checks.embedding_model_matches_the_settings(None, databases=["default"])
    assert [warning.id for warning in warnings] == ["retrieval.W001"]
    assert "manage.py reembed" in warnings[0].hint


@pytest.mark.parametrize("mode", ["dense", "hybrid"])
def test_searches_during_a_reembed_use_the_old_vectors_and_after_it_only_the_new(
    indexed, fake_openai, settings, owner, mode
):
    settings.RETRIEVAL_MODE = mode
    total = Chunk.objects.count()
    start_reembed(model=embeddings.configured_model())
    seen = []

    def search_between_batches(state: EmbeddingState) -> None:
        hits = retrieve(user=owner, notebook=indexed, question=QUESTION)
        assert hits
        assert {hit.chunk.embedding_model for hit in hits} == {"fake-embed"}
        assert {len(hit.chunk.embedding or []) for hit in hits} == {64}
        assert fake_openai.embedding_requests[-1].body["model"] == "fake-embed"
        seen.append(state.progress_done)

    state = run_reembed(batch_size=3, on_batch=search_between_batches)

    assert seen[:2] == [3, 6] and len(seen) == -(-total // 3)
    assert (state.active_model, state.active_dimensions, state.target_model) == (
        "fake-embed-2",
        32,
        "",
    )
    assert embedding_state.active_model() == "fake-embed-2"
    assert not ChunkEmbedding.objects.exists()  # the copies are gone, on the chunks now
    assert {(c.embedding_model, len(c.embedding)) for c in Chunk.objects.all()} == {
        ("fake-embed-2", 32)
    }
    hits = retrieve(user=owner, notebook=indexed, question=QUESTION)
    assert hits and {len(hit.chunk.embedding) for hit in hits} == {32}
    assert fake_openai.embedding_requests[-1].body["model"] == "fake-embed-2"
    assert checks.embedding_model_matches_the_settings(None, databases=["default"]) == []


def test_an_interrupted_reembed_resumes_without_embedding_a_chunk_twice(indexed, fake_openai):
    start_reembed(model=embeddings.configured_model())
    state = run_reembed(batch_size=4, max_batches=1)
    assert (state.active_model, state.target_model) == ("fake-embed", "fake-embed-2")
    assert state.progress_done == 4 and state.progress_total == Chunk.objects.count()

    # Asking again (the command run twice) resumes the same switch.
    start_reembed(model=embeddings.configured_model())
    state = run_reembed(batch_size=4)

    assert state.active_model == "fake-embed-2"
    texts = embedded_texts(fake_openai, "fake-embed-2")
    assert sorted(texts) == sorted(Chunk.objects.values_list("text", flat=True))


def test_chunks_written_during_a_reembed_get_both_vectors_or_are_caught_before_the_switch(
    indexed, fake_openai, notebook, add_ready_source
):
    start_reembed(model=embeddings.configured_model())
    added: list[object] = []

    def add_sources(state: EmbeddingState) -> None:
        if added:
            return
        # Processed during the switch: vectors of both models.
        added.append(add_ready_source(notebook, b"Bitterns boom in the reeds at dawn.", "b.txt"))
        # Written by a process that had not seen the switch begin: no new vector yet.
        first = Chunk.objects.first()
        assert first is not None
        added.append(
            Chunk.objects.create(
                source=first.source,
                ordinal=999,
                text="Coots dive.",
                char_start=0,
                char_end=11,
                embedding=[0.1] * 64,
                embedding_model="fake-embed",
            )
        )

    run_reembed(batch_size=3, on_batch=add_sources)

    new_source, late_chunk = added
    assert ChunkEmbedding.objects.count() == 0
    assert set(Chunk.objects.values_list("embedding_model", flat=True)) == {"fake-embed-2"}
    late_chunk.refresh_from_db()
    assert len(late_chunk.embedding) == 32
    texts = embedded_texts(fake_openai, "fake-embed-2")
    assert texts.count("Bitterns boom in the reeds at dawn.") == 1  # at ingest, not again
    assert "Coots dive." in texts
    assert new_source.chunks.get().embedding_model == "fake-embed-2"


def test_the_command_queues_the_job_and_reports(indexed, capsys):
    call_command("reembed")
    out = capsys.readouterr().out
    assert "with fake-embed-2 in the background" in out
    assert EmbeddingState.objects.get().target_model == "fake-embed-2"

    call_command("reembed", "--model", "fake-embed")  # the active one: nothing to do
    assert "active embedding model already" in capsys.readouterr().out
    assert EmbeddingState.objects.get().target_model == ""


def test_reembedding_to_the_active_model_is_refused(indexed):
    with pytest.raises(NothingToDo):
        start_reembed(model=embeddings.EmbeddingModel("fake-embed", 64))


@pytest.mark.django_db(transaction=True)
def test_reembed_wait_runs_the_job_on_a_real_worker_and_switches(indexed, owner, capsys):
    call_command("reembed", "--wait")

    assert "Switched to fake-embed-2" in capsys.readouterr().out
    job = ProcrastinateJob.objects.get(task_name="retrieval.tasks.reembed_chunks")
    assert job.status == "succeeded"
    assert set(Chunk.objects.values_list("embedding_model", flat=True)) == {"fake-embed-2"}
    assert retrieve(user=owner, notebook=indexed, question=QUESTION)


def test_a_switch_between_embedding_a_question_and_searching_embeds_it_again(
    indexed, owner, fake_openai, monkeypatch
):
    start_reembed(model=embeddings.configured_model())
    embed_query = embeddings.embed_query
    models = []

    def embed_then_switch(text, *, user, model=None):
        vector = embed_query(text, user=user, model=model)
        models.append(model.name)
        if len(models) == 1:
            run_reembed()  # the switch commits while the question is in flight
        return vector

    monkeypatch.setattr(embeddings, "embed_query", embed_then_switch)
    hits = retrieve(user=owner, notebook=indexed, question=QUESTION)

    assert models == ["fake-embed", "fake-embed-2"]
    assert hits and {len(hit.chunk.embedding) for hit in hits} == {32}


def test_a_source_embedded_by_the_old_model_while_the_switch_commits_is_embedded_again(
    indexed, notebook, add_ready_source, monkeypatch
):
    start_reembed(model=embeddings.configured_model())
    embed_texts, remote_vectors = embeddings.embed_texts, embeddings.remote_vectors
    calls = []

    def asked_early(texts, *, model):
        # The old model's vectors, asked for while the chunks are written (a thread).
        calls.append(model.name)
        return remote_vectors(texts, model=model)

    def embed_then_switch(texts, *, user, on_progress=None, model=None):
        calls.append(model.name)
        vectors = embed_texts(texts, user=user, on_progress=on_progress, model=model)
        if len(calls) == 2:
            monkeypatch.setattr(embeddings, "embed_texts", embed_texts)
            run_reembed()  # commits before the source writes its vectors
            monkeypatch.setattr(embeddings, "embed_texts", embed_then_switch)
        return vectors

    monkeypatch.setattr(embeddings, "remote_vectors", asked_early)
    monkeypatch.setattr(embeddings, "embed_texts", embed_then_switch)
    source = add_ready_source(notebook, b"Bitterns boom in the reeds at dawn.", "b.txt")

    # Old model, next model (both at the same time), then the new active one alone.
    assert calls == ["fake-embed", "fake-embed-2", "fake-embed-2"]
    chunk = source.chunks.get()
    assert (chunk.embedding_model, len(chunk.embedding)) == ("fake-embed-2", 32)
    assert not ChunkEmbedding.objects.exists()
