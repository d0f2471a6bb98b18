"""The streamed answer through Django's ASGI handler, as uvicorn serves it: the test client
reads an async response its own way, and would not show a sync iterator read to the end
before anything is sent, nor what a client that hangs up does."""

import asyncio
import json
from urllib.parse import urlencode

import pytest
from asgiref.sync import async_to_sync
from django.core.handlers.asgi import ASGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from django.urls import reverse

from billing.models import Usage
from generation.tests.passages import BREAD, HERONS, TRAINS
from notebooks.models import Message

REPLY = "Grey herons wait motionless at the edge of the pond [1]."
CSRF = "x" * 32


@pytest.fixture
def library(fake_openai, notebook, add_ready_source):
    return [
        add_ready_source(notebook, HERONS, "herons.txt"),
        add_ready_source(notebook, TRAINS, "trains.txt"),
        add_ready_source(notebook, BREAD, "bread.txt"),
    ]


def serve(client, path: str, data: dict, fake_openai, *, hang_up_after: int | None = None):
    """POST through ASGIHandler; returns the body parts sent, each with the number of
    chunks the fake model server had sent by then. `hang_up_after` body parts, the client
    disconnects."""
    body = urlencode(data).encode()
    cookies = f"sessionid={client.cookies['sessionid'].value}; csrftoken={CSRF}"
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", b"testserver"),
            (b"content-type", b"application/x-www-form-urlencoded"),
            (b"content-length", str(len(body)).encode()),
            (b"cookie", cookies.encode()),
            (b"x-csrftoken", CSRF.encode()),
        ],
        "client": ("127.0.0.1", 50000),
        "server": ("testserver", 80),
    }
    parts: list[tuple[bytes, int]] = []

    async def run():
        request = [{"type": "http.request", "body": body, "more_body": False}]
        hung_up = asyncio.Event()

        async def receive():
            if request:
                return request.pop(0)
            await hung_up.wait()
            return {"type": "http.disconnect"}

        async def send(message):
            if message["type"] == "http.response.body" and message.get("body"):
                parts.append((message["body"], fake_openai.chunks_sent))
                if hang_up_after is not None and len(parts) >= hang_up_after:
                    hung_up.set()

        await ASGIHandler()(scope, receive, send)

    # The handler would close the test's database connection, and its transaction with it.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        async_to_sync(run)()
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)
    return parts


def test_under_asgi_the_first_words_are_sent_while_the_model_is_still_writing(
    client, owner, notebook, library, fake_openai
):
    fake_openai.chat_replies.append(REPLY)
    fake_openai.stream_delay = 0.1
    client.force_login(owner)
    url = reverse("notebooks:ask_stream", args=[notebook.pk])

    parts = serve(client, url, {"question": "Where do herons wait?"}, fake_openai)

    # The passages come first, before the model has written anything; then its words.
    evidence, sent_by_then = parts[0]
    assert evidence.startswith(b"event: evidence\n") and sent_by_then == 0
    first, sent_by_then = next(part for part in parts if part[0].startswith(b"event: delta\n"))
    assert sent_by_then < 5  # of the 12 chunks the model sends
    assert b"event: done\n" in parts[-1][0]
    assert Message.objects.filter(content=REPLY).exists()


def test_under_asgi_a_client_that_hangs_up_leaves_nothing_stored(
    client, owner, notebook, library, fake_openai
):
    fake_openai.chat_replies.append(REPLY)
    fake_openai.stream_delay = 0.1
    client.force_login(owner)
    url = reverse("notebooks:ask_stream", args=[notebook.pk])

    # The passages, then the first word: the reader hangs up there.
    parts = serve(client, url, {"question": "Where do herons wait?"}, fake_openai, hang_up_after=2)

    assert len(parts) < 6
    assert parts[0][0].startswith(b"event: evidence\n")
    assert json.loads(parts[1][0].split(b"data: ")[1]) == {"text": "Grey"}
    assert not Message.objects.exists()
    chat = Usage.objects.get(kind="chat")
    assert chat.notebook_id == notebook.pk and chat.output_tokens < 11
