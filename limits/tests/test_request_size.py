"""Bodies over REQUEST_MAX_BYTES are refused with 413 before they are read."""

from __future__ import annotations

import asyncio
import io
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.urls import reverse

from library.models import Source
from limits.middleware import BodySizeLimit


class UnreadableBody(io.RawIOBase):
    """A request body that fails the test if anything reads it."""

    def read(self, *args):
        raise AssertionError("the body was read")

    readline = readinto = read


def test_a_declared_length_over_the_limit_is_refused_unread(client, owner, notebook, settings):
    settings.UPLOAD_MAX_BYTES, settings.REQUEST_MAX_BYTES = 500, 1000
    client.force_login(owner)

    response = client.generic(
        "POST",
        reverse("notebooks:upload", args=[notebook.pk]),
        data=b"x",
        content_type="multipart/form-data; boundary=b",
        CONTENT_LENGTH="500000000",
        **{"wsgi.input": UnreadableBody()},
    )

    assert response.status_code == 413
    assert "UPLOAD_MAX_BYTES" in response.text
    assert not Source.objects.exists()


def test_a_body_within_the_limit_goes_through(client, owner, notebook, settings, fake_openai):
    settings.REQUEST_MAX_BYTES = 100_000
    client.force_login(owner)
    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = SimpleUploadedFile("notes.txt", b"Herons wait.", "text/plain")

    response = client.post(reverse("notebooks:upload", args=[notebook.pk]), {"files": [upload]})

    assert response.status_code == 302
    assert Source.objects.count() == 1


def _run_asgi(app, *, headers, chunks):
    """Call an ASGI app with a POST whose body arrives in `chunks`; returns what was sent
    and how many chunks the app asked for."""
    sent, asked = [], []
    pending = list(chunks)

    async def receive():
        asked.append(1)
        body = pending.pop(0) if pending else b""
        return {"type": "http.request", "body": body, "more_body": bool(pending)}

    async def send(message):
        sent.append(message)

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/notebooks/1/upload/",
        "headers": headers,
        "query_string": b"",
    }

    async def call() -> None:
        await app(scope, receive, send)

    # In a thread of its own, with its own event loop: in the full suite an earlier test
    # can leave asyncio state behind in the main thread (seen once, not pinned down), and
    # this middleware test must not depend on what ran before it.
    with ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(asyncio.run, call()).result()
    return sent, len(asked)


async def reads_everything(scope, receive, send):
    """Like Django's ASGI handler: reads the whole body, then answers 200."""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return  # Django: RequestAborted, nothing sent
        if not message.get("more_body"):
            break
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"ok"})


def test_asgi_refuses_a_declared_length_over_the_limit_without_receiving(settings):
    settings.UPLOAD_MAX_BYTES, settings.REQUEST_MAX_BYTES = 500, 1000

    sent, asked = _run_asgi(
        BodySizeLimit(reads_everything),
        headers=[(b"content-length", b"500000000")],
        chunks=[b"x" * 100],
    )

    assert asked == 0
    assert sent[0]["status"] == 413
    assert b"UPLOAD_MAX_BYTES" in sent[1]["body"]


def test_asgi_cuts_off_a_chunked_body_past_the_limit(settings):
    settings.UPLOAD_MAX_BYTES, settings.REQUEST_MAX_BYTES = 500, 1000

    sent, asked = _run_asgi(BodySizeLimit(reads_everything), headers=[], chunks=[b"x" * 400] * 100)

    assert asked == 3  # 400, 800, 1200: cut off there, 97 chunks never read
    assert [message.get("status") for message in sent[:1]] == [413]


def test_asgi_passes_a_body_within_the_limit(settings):
    settings.UPLOAD_MAX_BYTES, settings.REQUEST_MAX_BYTES = 500, 1000

    sent, asked = _run_asgi(
        BodySizeLimit(reads_everything),
        headers=[(b"content-length", b"800")],
        chunks=[b"x" * 400] * 2,
    )

    assert sent[0]["status"] == 200


@pytest.mark.django_db
def test_the_served_application_has_the_limit(settings):
    from config.asgi import application

    settings.UPLOAD_MAX_BYTES, settings.REQUEST_MAX_BYTES = 500, 1000

    assert isinstance(application, BodySizeLimit)
    sent, asked = _run_asgi(application, headers=[(b"content-length", b"5000000")], chunks=[b"x"])
    assert (sent[0]["status"], asked) == (413, 0)


def test_the_refusal_names_the_upload_limit_a_person_can_act_on(client, owner, notebook, settings):
    # The request may carry 1 MiB of form beside the file; the limit to name is the file's.
    settings.UPLOAD_MAX_BYTES = 100 * 1024 * 1024
    settings.REQUEST_MAX_BYTES = settings.UPLOAD_MAX_BYTES + 1024 * 1024
    client.force_login(owner)

    response = client.generic(
        "POST",
        reverse("notebooks:upload", args=[notebook.pk]),
        data=b"x",
        content_type="multipart/form-data; boundary=b",
        CONTENT_LENGTH=str(300 * 1024 * 1024),
        **{"wsgi.input": UnreadableBody()},
    )

    assert response.status_code == 413
    assert "larger than 100 MiB" in response.text
    assert "(UPLOAD_MAX_BYTES)" in response.text


def test_a_request_limit_below_the_upload_limit_is_the_one_named(client, owner, notebook, settings):
    settings.UPLOAD_MAX_BYTES = 100 * 1024 * 1024
    settings.REQUEST_MAX_BYTES = 20 * 1024 * 1024
    client.force_login(owner)

    response = client.generic(
        "POST",
        reverse("notebooks:upload", args=[notebook.pk]),
        data=b"x",
        content_type="multipart/form-data; boundary=b",
        CONTENT_LENGTH=str(300 * 1024 * 1024),
        **{"wsgi.input": UnreadableBody()},
    )

    assert "larger than 20 MiB" in response.text
    assert "(REQUEST_MAX_BYTES)" in response.text
