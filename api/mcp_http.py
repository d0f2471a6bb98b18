"""The MCP server over streamable HTTP, as an ASGI app that config/asgi.py mounts at /mcp:
a request without a live token is refused with 401 before the protocol is spoken."""

from __future__ import annotations

import json
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from mcp.server.transport_security import TransportSecuritySettings

from api.mcp_server import server
from api.tokens import find_token

PATH = "/mcp"


def _security() -> TransportSecuritySettings:
    """The Host header checked against ALLOWED_HOSTS, as Django checks it for the pages."""
    hosts = list(settings.ALLOWED_HOSTS)
    if "*" in hosts:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    allowed = [pattern for host in hosts for pattern in (host, f"{host}:*")]
    return TransportSecuritySettings(allowed_hosts=allowed, allowed_origins=[])


def _bearer(scope: dict[str, Any]) -> str:
    headers = dict(scope.get("headers") or [])
    scheme, _, secret = headers.get(b"authorization", b"").decode("latin-1").partition(" ")
    return secret.strip() if scheme.lower() == "bearer" else ""


class TokenRequired:
    """401 with a JSON error for a request whose token is missing, unknown or revoked."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            secret = _bearer(scope)
            if not secret or await sync_to_async(find_token)(secret) is None:
                body = json.dumps(
                    {"code": "invalid_token", "message": "Send a live token: Bearer <token>."}
                ).encode()
                headers = [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")]
                await send({"type": "http.response.start", "status": 401, "headers": headers})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def mcp_app() -> Any:
    # Stateless, answered as JSON: any web process may take any request, with no session
    # to keep between them (several uvicorn workers, several machines).
    app = server.streamable_http_app(
        streamable_http_path=PATH,
        stateless_http=True,
        json_response=True,
        transport_security=_security(),
    )
    return TokenRequired(app)


class WithMcp:
    """Django for every path but /mcp; the lifespan goes to the MCP app, whose session
    manager runs for as long as the server does (Django's handler takes no lifespan)."""

    def __init__(self, django: Any, mcp: Any) -> None:
        self.django = django
        self.mcp = mcp

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await self.mcp.app(scope, receive, send)
        elif scope["type"] == "http" and (
            scope["path"] == PATH or scope["path"].startswith(PATH + "/")
        ):
            await self.mcp(scope, receive, send)
        else:
            await self.django(scope, receive, send)
