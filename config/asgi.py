import gc
import os

import django
from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIHandler

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")


class SyncChainASGIHandler(ASGIHandler):
    """Django's ASGI handler with its middleware chain built synchronous, entered once.

    Loupe's views and WhiteNoise are synchronous. Django's own handler builds an async
    chain, so a request crossed between the event loop and its thread for each
    async-capable middleware's process_request and process_response, back for WhiteNoise,
    and again for CSRF's process_view and for the view: about 18 crossings, several ms of a
    streamed answer's first token (bench/README.md, streaming overhead). Built as WSGI
    builds it, the middleware and the view run in the request's thread in one crossing.
    Responses are still sent by the event loop, and a streamed answer's async iterator is
    read there."""

    def load_middleware(self, is_async: bool = False) -> None:
        super().load_middleware(is_async=False)
        # thread_sensitive: the request's own thread (Django's ThreadSensitiveContext), the
        # one a streamed answer's steps run in too (notebooks/views/chat.py).
        # django-stubs leaves the chain's type undeclared.
        chain = self._middleware_chain  # type: ignore[has-type]
        self._middleware_chain = sync_to_async(chain, thread_sensitive=True)


django.setup(set_prefix=False)  # what Django's get_asgi_application() does first
# Bodies over REQUEST_MAX_BYTES are refused before Django reads them (limits/middleware.py).
from api.mcp_http import WithMcp, mcp_app  # noqa: E402 - needs the settings module set
from config.proxy import ProxyHeaders  # noqa: E402 - needs the settings module set
from limits.middleware import BodySizeLimit  # noqa: E402

# The client's address and scheme as the proxy settings allow (config/proxy.py); /mcp is the
# MCP server (api/mcp_http.py), every other path Django's.
application = BodySizeLimit(ProxyHeaders(WithMcp(SyncChainASGIHandler(), mcp_app())))

# Everything made so far (Django, the apps, their modules: nearly every object the process
# will hold for good) is left out of the garbage collector's passes. A full pass walked
# them all, often enough to land inside someone's answer and long enough to be felt there
# (bench/README.md, streaming overhead); what requests make is still collected.
gc.freeze()
