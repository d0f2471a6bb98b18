"""A model server that is down or rate-limiting fails an ingest attempt, not the source: the
job runs again with backoff; a final error, or the last attempt, fails the source."""

from __future__ import annotations

import httpx2
import openai
import pytest
from django.core.files.base import ContentFile
from django.utils import timezone
from procrastinate.contrib.django import app
from procrastinate.contrib.django.models import ProcrastinateJob
from procrastinate.jobs import Job

from ingest.services import add_source, process_source
from library.models import Source
from ops.jobs import TRANSIENT_RETRY
from ops.worker import drain_queue
from providers.errors import ProviderError


@pytest.fixture
def quick_retries(settings):
    settings.JOB_RETRY_ATTEMPTS = 3
    settings.JOB_RETRY_BASE_SECONDS = 0  # due again at once, so one worker run sees it


def add_text(notebook) -> Source:
    upload = ContentFile(b"Backoff and retry keep sources alive. " * 20, name="retry.txt")
    return add_source(owner=notebook.owner, notebook=notebook, upload=upload).source


@pytest.mark.django_db(transaction=True)
def test_a_server_error_is_retried_and_the_source_becomes_ready(
    fake_openai, notebook, quick_retries
):
    source = add_text(notebook)
    # The quick re-send (OPENAI_MAX_RETRIES=1) gets a 500 too: the attempt fails.
    fake_openai.fail_next("500", endpoint="embeddings", times=2)

    drain_queue()

    source.refresh_from_db()
    assert source.status == Source.Status.READY, source.error
    assert source.error == ""
    job = ProcrastinateJob.objects.get(args={"source_id": source.pk})
    assert job.status == "succeeded"
    assert job.attempts == 2


@pytest.mark.django_db(transaction=True)
def test_rate_limiting_on_every_attempt_fails_the_source_on_the_last(
    fake_openai, notebook, quick_retries
):
    source = add_text(notebook)
    fake_openai.fail_next("429", endpoint="embeddings", times=100)

    drain_queue()

    source.refresh_from_db()
    assert source.status == Source.Status.FAILED
    assert "rate-limiting" in source.error
    job = ProcrastinateJob.objects.get(args={"source_id": source.pk})
    assert job.attempts == 3  # JOB_RETRY_ATTEMPTS runs in all
    # Each attempt = the first request + the client's one retry.
    assert len(fake_openai.embedding_requests) == 6


@pytest.mark.django_db(transaction=True)
def test_an_answer_loupe_cannot_use_fails_at_once(fake_openai, notebook, quick_retries):
    source = add_text(notebook)
    fake_openai.fail_next("garbage", endpoint="embeddings", times=100)

    drain_queue()

    source.refresh_from_db()
    assert source.status == Source.Status.FAILED
    job = ProcrastinateJob.objects.get(args={"source_id": source.pk})
    assert job.attempts == 1


def test_waits_double_from_the_base_and_stop_at_an_hour(settings):
    settings.JOB_RETRY_BASE_SECONDS = 30

    assert [TRANSIENT_RETRY.wait_seconds(n) for n in range(4)] == [30, 60, 120, 240]
    assert TRANSIENT_RETRY.wait_seconds(20) == 3600


def provider_error_caused_by(cause: Exception) -> ProviderError:
    try:
        raise ProviderError("the model failed") from cause
    except ProviderError as error:
        return error


def test_a_transient_error_is_rescheduled_after_the_wait_until_the_last_attempt(settings):
    settings.JOB_RETRY_ATTEMPTS = 5
    settings.JOB_RETRY_BASE_SECONDS = 30
    down = provider_error_caused_by(
        openai.APIConnectionError(request=httpx2.Request("POST", "http://model/v1/embeddings"))
    )
    third = Job(id=1, queue="ingest", lock=None, queueing_lock=None, task_name="t", attempts=2)
    last = Job(id=1, queue="ingest", lock=None, queueing_lock=None, task_name="t", attempts=4)

    decision = TRANSIENT_RETRY.get_retry_decision(exception=down, job=third)

    assert decision is not None and decision.retry_at is not None
    wait = (decision.retry_at - timezone.now()).total_seconds()
    assert 110 < wait <= 120
    assert TRANSIENT_RETRY.get_retry_decision(exception=down, job=last) is None
    final = ProviderError("The chat model gave an answer Loupe cannot use.")
    assert TRANSIENT_RETRY.get_retry_decision(exception=final, job=third) is None
    assert app.tasks["ingest.tasks.ingest_source"].retry_strategy is TRANSIENT_RETRY


@pytest.mark.django_db
def test_between_attempts_the_source_waits_in_the_queue_saying_why(fake_openai, notebook):
    source = add_text(notebook)
    fake_openai.fail_next("500", endpoint="embeddings", times=2)

    with pytest.raises(ProviderError) as raised:
        process_source(source_id=source.pk, raise_transient=True)

    assert raised.value.transient
    source.refresh_from_db()
    # Read and searchable by its words; its embedding waits for the next attempt.
    assert (source.status, source.stage) == (Source.Status.READY, Source.Stage.EMBEDDING)
    assert "HTTP 500" in source.error and "try again" in source.error

    source = process_source(source_id=source.pk, raise_transient=True)
    assert (source.status, source.stage, source.error) == (Source.Status.READY, "", "")
