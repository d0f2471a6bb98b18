"""A chat model that is down or rate-limiting fails a generation attempt, not the document:
the "generate" job runs again with backoff (ops.jobs); the last attempt fails it."""

from __future__ import annotations

import pytest
from procrastinate.contrib.django.models import ProcrastinateJob

from generation.documents.models import GeneratedDocument
from generation.documents.services import request_document
from generation.tests.studio.conftest import REPLIES, reply
from ops.worker import drain_queue


@pytest.fixture
def quick_retries(settings):
    settings.JOB_RETRY_ATTEMPTS = 3
    settings.JOB_RETRY_BASE_SECONDS = 0  # due again at once, so one worker run sees it


def _job(document: GeneratedDocument) -> ProcrastinateJob:
    return ProcrastinateJob.objects.get(
        task_name="generation.tasks.generate_document", args={"document_id": document.pk}
    )


@pytest.mark.django_db(transaction=True)
def test_a_server_error_is_retried_and_the_document_becomes_ready(
    fake_openai, owner, notebook, studio_sources, quick_retries
):
    fake_openai.chat_replies.append(reply(REPLIES["report"]))
    document = request_document(user=owner, notebook=notebook, kind="report")
    # The quick re-send (OPENAI_MAX_RETRIES=1) gets a 500 too: the attempt fails.
    fake_openai.fail_next("500", endpoint="completions", times=2)

    drain_queue("generate")

    document.refresh_from_db()
    assert document.status == GeneratedDocument.Status.READY, document.error
    assert document.error == ""
    job = _job(document)
    assert (job.status, job.attempts) == ("succeeded", 2)


@pytest.mark.django_db(transaction=True)
def test_rate_limiting_on_every_attempt_fails_the_document_on_the_last(
    fake_openai, owner, notebook, studio_sources, quick_retries
):
    document = request_document(user=owner, notebook=notebook, kind="report")
    fake_openai.fail_next("429", endpoint="completions", times=100)

    drain_queue("generate")

    document.refresh_from_db()
    assert document.status == GeneratedDocument.Status.FAILED
    assert "rate-limiting" in document.error
    assert "try again shortly" not in document.error
    assert _job(document).attempts == 3  # JOB_RETRY_ATTEMPTS runs in all
    # Each attempt = the first request + the client's one retry.
    assert len(fake_openai.chat_requests) == 6
