"""The served ASGI application runs a request's middleware and view in one crossing from the
event loop to the request's thread (config/asgi.py), not one per middleware step."""

import asyncio
from concurrent.futures import ThreadPoolExecutor

import pytest
from asgiref import sync
from django.core.handlers.asgi import ASGIHandler

from config.asgi import SyncChainASGIHandler, application


def _get(app, path: str) -> tuple[list[dict], int]:
    """GET `path` through an ASGI app; what it sent and how many times it crossed from the
    event loop into a thread (sync_to_async)."""
    sent: list[dict] = []
    crossings = 0
    original = sync.SyncToAsync.__call__

    async def counted(self, *args, **kwargs):
        nonlocal crossings
        crossings += 1
        return await original(self, *args, **kwargs)

    received: list[int] = []

    async def receive():
        if received:  # Django then listens for a disconnect until it has answered
            await asyncio.Future()
        received.append(1)
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    scope = {
        "type": "http",
        "method": "GET",
        "path": path,
        "headers": [(b"host", b"testserver"), (b"accept-language", b"en")],
        "query_string": b"",
        "server": ("testserver", 80),
    }
    sync.SyncToAsync.__call__ = counted  # type: ignore[method-assign]
    try:
        # A thread with its own event loop, as in limits/tests/test_request_size.py.
        with ThreadPoolExecutor(max_workers=1) as pool:
            pool.submit(asyncio.run, app(scope, receive, send)).result()
    finally:
        sync.SyncToAsync.__call__ = original  # type: ignore[method-assign]
    return sent, crossings


@pytest.mark.parametrize("handler", [ASGIHandler, SyncChainASGIHandler])
def test_the_sign_in_page_is_served_through_all_the_middleware(settings, handler):
    settings.ALLOWED_HOSTS = ["testserver"]
    sent, _ = _get(handler(), "/login/")

    start = sent[0]
    assert start["status"] == 200
    headers = {name.lower(): value for name, value in start["headers"]}
    # Set by the middleware: CSP, clickjacking, the CSRF cookie, the language.
    assert b"content-security-policy" in headers
    assert headers[b"x-frame-options"] == b"DENY"
    assert b"csrftoken" in headers[b"set-cookie"]
    assert b"Sign in" in b"".join(message.get("body", b"") for message in sent[1:])


def test_a_request_crosses_into_its_thread_once(settings):
    settings.ALLOWED_HOSTS = ["testserver"]
    _, django_crossings = _get(ASGIHandler(), "/login/")
    _, ours = _get(SyncChainASGIHandler(), "/login/")

    # Django's own chain: each async-capable middleware's request and response steps, the
    # view and more; ours: the chain, the request_started signal's receivers (closing old
    # database connections) and closing the response.
    assert django_crossings > 10
    assert ours == 3


def test_the_served_application_is_ours():
    # Inside the body size limit, the proxy headers and the router that sends /mcp to the
    # MCP server (config/asgi.py).
    inner = application
    for _ in range(5):
        if isinstance(inner, SyncChainASGIHandler):
            break
        inner = getattr(inner, "django", None) or inner.app
    assert isinstance(inner, SyncChainASGIHandler)
