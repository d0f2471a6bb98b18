"""Request bodies over REQUEST_MAX_BYTES are refused (413) before they are read.

Two layers, because Django's two servers read bodies at different times:
- `BodySizeLimit` wraps the ASGI application (config/asgi.py, what uvicorn serves): Django's
  ASGI handler reads the whole body into a temporary file before any middleware runs, so
  the limit must sit in front of it. A declared Content-Length over the limit is answered at
  once without receiving the body; a body without one (chunked) is counted as it arrives and
  cut off past the limit.
- `request_size_limit_middleware` does the Content-Length check under WSGI (and the test
  client), where the body is read lazily: it runs before CSRF, which would read the form.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext as _

from limits.responses import CONTENT_TOO_LARGE, refusal

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


def too_large_message() -> str:
    """Names the size a person may upload: UPLOAD_MAX_BYTES. The request may be a little
    larger (REQUEST_MAX_BYTES leaves room for the form around the file), which is no size
    anyone chose; unless REQUEST_MAX_BYTES was set below it, then that is the limit."""
    size, setting = settings.UPLOAD_MAX_BYTES, "UPLOAD_MAX_BYTES"
    if size > settings.REQUEST_MAX_BYTES:
        size, setting = settings.REQUEST_MAX_BYTES, "REQUEST_MAX_BYTES"
    return _(
        "This upload is larger than %(mib)s MiB, the most Loupe accepts at once "
        "(%(setting)s). Upload fewer or smaller files."
    ) % {"mib": f"{size / (1024 * 1024):.3g}", "setting": setting}


def _for_a_program(authorization: str, accept: str) -> bool:
    """A program's request (a bearer token, or JSON asked for) is refused in JSON, with a
    stable code, as the API refuses everything (docs/api.md)."""
    return authorization.lower().startswith("bearer ") or "application/json" in accept


def _json_refusal() -> bytes:
    return json.dumps({"code": "too_large", "message": too_large_message(), "field": None}).encode()


def _declared_length(value: str | None) -> int | None:
    return int(value) if value and value.strip().isdigit() else None


def request_size_limit_middleware(
    get_response: Callable[[HttpRequest], HttpResponse],
) -> Callable[[HttpRequest], HttpResponse]:
    def middleware(request: HttpRequest) -> HttpResponse:
        length = _declared_length(request.META.get("CONTENT_LENGTH"))
        if length is not None and length > settings.REQUEST_MAX_BYTES:
            if _for_a_program(
                request.headers.get("Authorization", ""), request.headers.get("Accept", "")
            ):
                return HttpResponse(
                    _json_refusal(), status=CONTENT_TOO_LARGE, content_type="application/json"
                )
            return refusal(request, too_large_message(), status=CONTENT_TOO_LARGE)
        return get_response(request)

    return middleware


class BodySizeLimit:
    """ASGI middleware: refuse bodies over REQUEST_MAX_BYTES without reading them whole."""

    def __init__(self, app: Any) -> None:  # an ASGI application
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = settings.REQUEST_MAX_BYTES
        headers = dict(scope.get("headers") or [])
        length = _declared_length(headers.get(b"content-length", b"").decode("latin-1"))
        program = _for_a_program(
            headers.get(b"authorization", b"").decode("latin-1"),
            headers.get(b"accept", b"").decode("latin-1"),
        )
        if length is not None and length > limit:
            await self._refuse(send, program=program)
            return
        received = 0
        cut_off = False
        started = False

        async def counting_receive() -> Message:
            nonlocal received, cut_off
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    # Django treats a disconnect while reading as an aborted request and
                    # sends nothing; the 413 is sent below.
                    cut_off = True
                    return {"type": "http.disconnect"}
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        await self.app(scope, counting_receive, tracking_send)
        if cut_off and not started:
            await self._refuse(send, program=program)

    async def _refuse(self, send: Send, *, program: bool) -> None:
        body = _json_refusal() if program else too_large_message().encode()
        kind = b"application/json" if program else b"text/plain; charset=utf-8"
        await send(
            {
                "type": "http.response.start",
                "status": CONTENT_TOO_LARGE,
                "headers": [
                    (b"content-type", kind),
                    (b"content-length", str(len(body)).encode()),
                    (b"connection", b"close"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
