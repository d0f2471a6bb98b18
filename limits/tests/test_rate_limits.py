"""Per-user limits on asking, adding sources and generating: 429 with a clear message."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import NoReverseMatch, reverse

from library.models import Source
from limits.models import RateCounter
from limits.rates import Rate
from limits.services import hit
from notebooks.models import Message, Notebook
from ops.tests.stack import database_url

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def tight(settings):
    settings.RATE_LIMIT_ASK = Rate(2, 60)
    settings.RATE_LIMIT_UPLOAD = Rate(2, 3600)
    settings.RATE_LIMIT_GENERATE = Rate(1, 3600)


def _ask(client, notebook, **headers):
    return client.post(
        reverse("notebooks:ask", args=[notebook.pk]), {"question": "Why?"}, headers=headers
    )


def test_asking_past_the_limit_is_refused_with_429_saying_when_to_retry(
    client, owner, notebook, tight, fake_openai
):
    client.force_login(owner)
    answered = [_ask(client, notebook).status_code for _ in range(2)]

    refused = _ask(client, notebook)

    assert answered == [302, 302]
    assert refused.status_code == 429
    assert 0 < int(refused["Retry-After"]) <= 61
    assert "limit for asking questions (RATE_LIMIT_ASK)" in refused.text
    assert "Try again in" in refused.text
    assert Message.objects.filter(role="user").count() == 2


def test_the_streamed_answer_shares_the_asking_limit(client, owner, notebook, tight, fake_openai):
    client.force_login(owner)
    _ask(client, notebook)
    _ask(client, notebook)

    response = client.post(
        reverse("notebooks:ask_stream", args=[notebook.pk]),
        {"question": "Why?"},
        headers={"HX-Request": "true"},
    )

    assert response.status_code == 429
    assert "RATE_LIMIT_ASK" in response.text


def test_for_htmx_the_notice_goes_into_the_form_that_was_sent(
    client, owner, notebook, tight, fake_openai
):
    client.force_login(owner)
    _ask(client, notebook)
    _ask(client, notebook)

    refused = _ask(client, notebook, **{"HX-Request": "true"})

    assert refused.status_code == 429
    assert refused["HX-Retarget"] == "closest form"
    assert refused["HX-Reswap"] == "beforeend"
    assert refused.text.strip().startswith('<p class="note error limit-refused" role="alert">')
    assert "<html" not in refused.text


def test_the_limit_is_per_user(client, owner, outsider, notebook, tight, fake_openai):
    theirs = Notebook.objects.create(owner=outsider, title="Theirs")
    client.force_login(owner)
    for _ in range(3):
        _ask(client, notebook)

    client.force_login(outsider)
    assert _ask(client, theirs).status_code == 302


def test_uploading_past_the_limit_is_refused_and_nothing_is_stored(
    client, owner, notebook, tight, fake_openai
):
    client.force_login(owner)
    url = reverse("notebooks:upload", args=[notebook.pk])
    for n in range(2):
        upload = SimpleUploadedFile(f"n{n}.txt", b"Note %d about herons." % n, "text/plain")
        assert client.post(url, {"files": [upload]}).status_code == 302

    upload = SimpleUploadedFile("n3.txt", b"One note too many.", "text/plain")
    refused = client.post(url, {"files": [upload]})
    added = client.post(reverse("notebooks:add_url", args=[notebook.pk]), {"url": "example.org"})

    assert refused.status_code == added.status_code == 429
    assert "RATE_LIMIT_UPLOAD" in refused.text
    assert Source.objects.count() == 2


def test_generating_past_the_limit_is_refused(client, owner, notebook, tight, fake_openai):
    try:
        url = reverse("studio:create", args=[notebook.pk])
    except NoReverseMatch:
        pytest.fail("the studio's create view is gone: put @rate_limited('generate') on its heir")
    client.force_login(owner)
    client.post(url, {"kind": "report"})

    refused = client.post(url, {"kind": "report"})

    assert refused.status_code == 429
    assert "RATE_LIMIT_GENERATE" in refused.text


def test_a_new_window_allows_again(db):
    rate = Rate(1, 60)

    first = hit("ask:user:1", rate, now=600.0)
    second = hit("ask:user:1", rate, now=630.0)
    later = hit("ask:user:1", rate, now=660.0)

    assert (first.allowed, second.allowed, later.allowed) == (True, False, True)
    assert second.retry_after == 31
    assert RateCounter.objects.count() == 1  # the finished window's row is gone


def test_a_switched_off_limit_counts_nothing(db):
    assert all(hit("ask:user:1", Rate(0, 1)).allowed for _ in range(5))
    assert not RateCounter.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_the_count_holds_across_processes():
    """Two web processes (here: another Python process) share one count in PostgreSQL."""
    code = (
        "from limits.rates import Rate; from limits.services import hit;"
        "[hit('ask:user:7', Rate(3, 3600)) for _ in range(3)]"
    )
    subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=REPO,
        env={**__import__("os").environ, "DATABASE_URL": database_url()},
        check=True,
        timeout=120,
    )

    assert not hit("ask:user:7", Rate(3, 3600)).allowed
