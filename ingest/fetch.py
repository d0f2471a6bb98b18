"""Fetching a web page for the worker, through the URL guard, with size and time caps.

Every connection goes to an address that ingest/url_guard.py has just checked: the socket is
opened to that IP, and the original host name travels only in the Host header and in TLS
(SNI and certificate check). Redirects are followed here, one by one, each target checked
the same way, so a public page cannot send the worker on to a private address.
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import ssl
import threading
import time
from dataclasses import dataclass
from urllib.parse import urljoin

from django.conf import settings

from ingest.passages import LoaderError
from ingest.url_guard import CheckedUrl, check_url
from texts import Text

MAX_REDIRECTS = 5
REDIRECT_STATUSES = {301, 302, 303, 307, 308}
READ_SIZE = 64 * 1024
USER_AGENT = "Loupe/1.0 (self-hosted notebook; fetches pages its users add)"
ACCEPT = "text/html, application/xhtml+xml, application/pdf, text/plain;q=0.9, */*;q=0.5"


class FetchError(LoaderError):
    """The page could not be fetched; the message says why in words a person understands."""


@dataclass(frozen=True)
class Fetched:
    url: str  # after redirects
    content_type: str  # the media type alone, lower case ("text/html"); "" when not sent
    charset: str  # from the Content-Type header, "" when not sent
    content: bytes


def fetch(url: str) -> Fetched:
    """Fetch a URL through the guard: at most MAX_REDIRECTS redirects, URL_MAX_BYTES bytes
    and URL_TIMEOUT_SECONDS seconds in all."""
    timeout = settings.URL_TIMEOUT_SECONDS
    deadline = time.monotonic() + timeout
    current = url
    for _hop in range(MAX_REDIRECTS + 1):
        checked = check_url(current)
        status, reason, headers, content = _request(checked, deadline=deadline)
        if status in REDIRECT_STATUSES:
            location = headers.get("Location", "").strip()
            if not location:
                raise FetchError(
                    Text(
                        "%(url)s redirects (HTTP %(status)s) but names no new address.",
                        url=current,
                        status=status,
                    )
                )
            current = urljoin(current, location)
            continue
        if status in {404, 410}:
            raise FetchError(
                Text(
                    "The web server answered HTTP %(status)s %(reason)s for %(url)s: the page "
                    "does not exist.",
                    status=status,
                    reason=reason,
                    url=current,
                )
            )
        if not 200 <= status < 300:
            raise FetchError(
                Text(
                    "The web server answered HTTP %(status)s %(reason)s for %(url)s.",
                    status=status,
                    reason=reason,
                    url=current,
                )
            )
        return Fetched(
            url=current,
            content_type=headers.get_content_type() if "Content-Type" in headers else "",
            charset=headers.get_content_charset() or "",
            content=content,
        )
    raise FetchError(
        Text(
            "%(url)s redirects more than %(max)s times (last to %(last)s); it may be a "
            "redirect loop.",
            url=url,
            max=MAX_REDIRECTS,
            last=current,
        )
    )


def _request(
    checked: CheckedUrl, *, deadline: float
) -> tuple[int, str, http.client.HTTPMessage, bytes]:
    """One GET to a checked URL; the body is read only for a 2xx answer."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise _timed_out(checked)
    connection = _PinnedConnection(checked, timeout=remaining)
    # Socket timeouts bound each read, not the whole: a server trickling a byte a second
    # would never trip them. At the deadline this timer closes the socket under the reader.
    watchdog = threading.Timer(remaining, connection.abort)
    watchdog.daemon = True
    watchdog.start()
    try:
        connection.putrequest("GET", checked.target, skip_accept_encoding=True)
        connection.putheader("User-Agent", USER_AGENT)
        connection.putheader("Accept", ACCEPT)
        connection.putheader("Accept-Encoding", "identity")
        connection.endheaders()
        response = connection.getresponse()
        if not 200 <= response.status < 300:
            return response.status, response.reason, response.headers, b""
        return (
            response.status,
            response.reason,
            response.headers,
            _read_capped(checked, response, deadline=deadline),
        )
    except (OSError, http.client.HTTPException) as exc:
        if time.monotonic() >= deadline or isinstance(exc, TimeoutError):
            raise _timed_out(checked) from exc
        if isinstance(exc, ssl.SSLCertVerificationError):
            raise FetchError(
                Text(
                    "The secure connection to %(host)s failed: its certificate is not valid "
                    "(%(error)s).",
                    host=checked.host,
                    error=str(exc.verify_message),
                )
            ) from exc
        raise FetchError(
            Text("Could not fetch %(url)s: %(error)s.", url=checked.url, error=_describe(exc))
        ) from exc
    finally:
        watchdog.cancel()
        connection.close()


def _read_capped(
    checked: CheckedUrl, response: http.client.HTTPResponse, *, deadline: float
) -> bytes:
    limit = settings.URL_MAX_BYTES
    declared = response.getheader("Content-Length", "")
    if declared.isdigit() and int(declared) > limit:
        raise _too_large(checked, limit)
    parts: list[bytes] = []
    size = 0
    while piece := response.read1(READ_SIZE):
        size += len(piece)
        if size > limit:
            raise _too_large(checked, limit)
        if time.monotonic() >= deadline:
            raise _timed_out(checked)
        parts.append(piece)
    if time.monotonic() >= deadline:
        # The watchdog may have cut the body short; what arrived is not the whole page.
        raise _timed_out(checked)
    return b"".join(parts)


def _too_large(checked: CheckedUrl, limit: int) -> FetchError:
    return FetchError(
        Text(
            "%(url)s is larger than %(size)s, the most Loupe fetches (URL_MAX_BYTES).",
            url=checked.url,
            size=_size(limit),
        )
    )


def _size(count: int) -> str:
    if count >= 1024 * 1024:
        return f"{count / (1024 * 1024):.3g} MiB"
    if count >= 1024:
        return f"{count / 1024:.3g} KiB"
    return f"{count} bytes"


def _timed_out(checked: CheckedUrl) -> FetchError:
    return FetchError(
        Text(
            "%(url)s took longer than %(seconds)s seconds to fetch (URL_TIMEOUT_SECONDS); the "
            "site may be slow or down.",
            url=checked.url,
            seconds=f"{settings.URL_TIMEOUT_SECONDS:g}",
        )
    )


def _describe(exc: BaseException) -> Text | str:
    if isinstance(exc, ConnectionRefusedError):
        return Text("the server refused the connection")
    if isinstance(exc, http.client.RemoteDisconnected):
        return Text("the server closed the connection without answering")
    if isinstance(exc, http.client.IncompleteRead):
        return Text("the server closed the connection before sending the whole page")
    return str(exc) or type(exc).__name__


class _PinnedConnection(http.client.HTTPConnection):
    """An HTTP(S) connection to the guard's checked addresses, never to a fresh lookup.

    http.client builds the Host header from `host` and `port`, so they stay the URL's;
    only `connect` differs: it dials the checked IPs, and wraps TLS for the host name.
    """

    def __init__(self, checked: CheckedUrl, *, timeout: float) -> None:
        super().__init__(checked.host, checked.port, timeout=timeout)
        self.default_port = 443 if checked.scheme == "https" else 80
        self._checked = checked
        self._aborted = False

    def connect(self) -> None:
        errors: list[OSError] = []
        for address in self._checked.addresses:
            if self._aborted:
                break
            try:
                sock = socket.create_connection((address, self._checked.port), self.timeout)
            except OSError as exc:
                errors.append(exc)
                continue
            if self._checked.scheme == "https":
                context = ssl.create_default_context()
                try:
                    sock = context.wrap_socket(sock, server_hostname=self._checked.host)
                except BaseException:
                    sock.close()
                    raise
            self.sock = sock
            return
        raise errors[-1] if errors else TimeoutError("aborted at the deadline")

    def abort(self) -> None:
        self._aborted = True
        sock = self.sock
        if sock is not None:
            with contextlib.suppress(OSError):  # already closed
                sock.shutdown(socket.SHUT_RDWR)
