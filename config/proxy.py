"""Which proxy headers the application believes, as the settings say.

uvicorn believes X-Forwarded-Proto and X-Forwarded-For from FORWARDED_ALLOW_IPS
(127.0.0.1 unless set) on its own, whatever TRUST_X_FORWARDED_PROTO says: any program on
the machine could then make a plain-HTTP request count as HTTPS (and get HSTS). So uvicorn
runs with --no-proxy-headers (ops/serving.py, docker-compose.yml)
and this middleware does its work instead: the client's address from a trusted proxy's
X-Forwarded-For (for the per-address sign-in limit), the scheme from X-Forwarded-Proto only
with TRUST_X_FORWARDED_PROTO.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

FORWARDED_PROTO = b"x-forwarded-proto"


class ProxyHeaders:
    def __init__(self, app: Any) -> None:  # an ASGI application
        self.app = ProxyHeadersMiddleware(app, trusted_hosts=settings.FORWARDED_ALLOW_IPS)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] in {"http", "websocket"} and not settings.TRUST_X_FORWARDED_PROTO:
            headers = [(name, value) for name, value in scope["headers"] if name != FORWARDED_PROTO]
            scope = {**scope, "headers": headers}
        await self.app(scope, receive, send)  # type: ignore[arg-type]  # ASGI scopes are dicts
