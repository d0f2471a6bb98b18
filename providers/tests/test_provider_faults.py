"""A model server that is slow, rate-limiting, failing or talking nonsense: each call is
retried with backoff (honouring Retry-After), then the source or the answer fails with a
reason a person can act on, and whatever the provider did answer is billed."""

from __future__ import annotations

import time

import pytest
from django.core.files.base import ContentFile
from django.urls import reverse

from billing.models import Usage
from ingest.services import add_source, process_source
from library.models import Source
from notebooks.models import Message
from providers import embeddings


def test_a_429_is_retried_after_the_servers_retry_after(fake_openai, db, settings):
    settings.OPENAI_MAX_RETRIES = 1
    fake_openai.retry_after_seconds = 1
    fake_openai.fail_next("429", endpoint="embeddings")
    started = time.monotonic()

    embeddings.embed_query("grey herons", user=None, model=embeddings.configured_model())

    assert time.monotonic() - started >= 1.0
    assert [r.answered_with for r in fake_openai.embedding_requests] == ["429", "ok"]


def test_retries_back_off_and_then_give_up_with_a_reason(fake_openai, db, settings):
    settings.OPENAI_MAX_RETRIES = 2
    fake_openai.fail_next("500", times=3, endpoint="embeddings")

    with pytest.raises(Exception, match=r"answered with an error \(HTTP 500\)"):
        embeddings.embed_query("grey herons", user=None, model=embeddings.configured_model())

    assert len(fake_openai.embedding_requests) == 3  # the call and its two retries


@pytest.mark.parametrize(
    ("mode", "reason"),
    [
        ("500", "answered with an error (HTTP 500)"),
        ("429", "is rate-limiting requests"),
        ("garbage", "gave an answer Loupe cannot use"),
        ("slow", "did not answer in time"),
    ],
)
def test_a_source_fails_with_the_reason_and_the_answered_batches_are_billed(
    fake_openai, notebook, settings, mode, reason
):
    settings.EMBEDDING_BATCH_SIZE = 2
    settings.OPENAI_TIMEOUT_SECONDS = 0.5
    fake_openai.slow_seconds = 2
    words = " ".join(f"word{i}" for i in range(1500)).encode()
    added = add_source(
        owner=notebook.owner, notebook=notebook, upload=ContentFile(words, name="long.txt")
    )
    # The first batch is answered; every try of the second fails.
    fake_openai.fail_next(mode, times=10, endpoint="embeddings", skip=1)

    source = process_source(source_id=added.source.pk)

    assert source.status == Source.Status.FAILED
    assert reason in source.error
    assert source.chunks.count() == 0
    billed = Usage.objects.filter(user=notebook.owner, kind="embedding")
    assert billed.count() == 1  # the answered batch, not the failed tries


@pytest.mark.parametrize(
    ("mode", "reason"),
    [("500", "HTTP 500"), ("429", "rate-limiting"), ("garbage", "cannot use")],
)
def test_an_answer_fails_with_the_reason_and_the_question_embedding_is_billed(
    client, fake_openai, notebook, add_ready_source, mode, reason
):
    add_ready_source(notebook, b"Grey herons wait at the edge of the pond.", "herons.txt")
    before = Usage.objects.filter(kind="embedding").count()
    fake_openai.fail_next(mode, times=10, endpoint="chat/completions")
    client.force_login(notebook.owner)

    response = client.post(
        reverse("notebooks:ask", args=[notebook.pk]),
        {"question": "Where do herons wait?"},
        headers={"HX-Request": "true"},
    )

    assert response.status_code == 200
    assert reason in response.text
    assert not Message.objects.filter(role="assistant").exists()
    assert Usage.objects.filter(kind="embedding").count() == before + 1
    assert not Usage.objects.filter(kind="chat").exists()
