"""Which URLs the worker may fetch: http(s) to public addresses only.

A web page is fetched by the server, on behalf of a user, so a URL must not reach what only
the server can reach: its own services on loopback, the private network, a cloud metadata
endpoint (169.254.169.254). The host is resolved here and every address it resolves to is
checked; ingest/fetch.py then connects to one of those checked addresses and never asks DNS
again, so an answer that changes between check and connect (DNS rebinding) cannot slip by.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import SplitResult, quote, urlsplit

from django.conf import settings

from ingest.passages import LoaderError
from texts import Text

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

SHARED_ADDRESS_SPACE = ipaddress.IPv4Network("100.64.0.0/10")  # carrier-grade NAT
NAT64_WELL_KNOWN = ipaddress.IPv6Network("64:ff9b::/96")
NAT64_LOCAL_USE = ipaddress.IPv6Network("64:ff9b:1::/48")
IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")
IPV4_LOOPBACK = ipaddress.IPv4Network("127.0.0.0/8")
IPV6_LOOPBACK = ipaddress.IPv6Address("::1")
URL_SAFE = "!#$%&'()*+,/:;=?@[]~"


class UrlRefused(LoaderError):
    """The URL may not be fetched; the message names the host or address and why."""


class HostNotFound(LoaderError):
    """The URL's host name does not resolve."""


@dataclass(frozen=True)
class CheckedUrl:
    url: str
    scheme: str  # "http" or "https"
    host: str  # as written in the URL, lower case, without brackets: for Host and SNI
    port: int
    target: str  # path and query, as sent in the request line
    addresses: tuple[str, ...]  # every address the host resolved to, all of them public


def parse_url(url: str) -> SplitResult:
    """Check a URL's form (scheme, host, no credentials) without resolving anything."""
    url = url.strip()
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError as exc:
        raise UrlRefused(
            Text("%(url)s is not a valid web address (%(error)s).", url=repr(url), error=str(exc))
        ) from exc
    if parts.scheme.lower() not in {"http", "https"}:
        shown = f"{parts.scheme}://" if parts.scheme else Text("no scheme")
        raise UrlRefused(
            Text(
                "%(url)s cannot be fetched: only http:// and https:// addresses are allowed, "
                "this one has %(scheme)s.",
                url=repr(url),
                scheme=shown,
            )
        )
    if "@" in parts.netloc:
        raise UrlRefused(
            Text(
                "Web addresses with a user name or password in them (user:pass@host) are not "
                "allowed; use a page that is readable without signing in."
            )
        )
    if not parts.hostname:
        raise UrlRefused(Text("%(url)s has no host name.", url=repr(url)))
    return parts


def forbidden_reason(address: IPAddress, *, allow_loopback: bool = False) -> Text | None:
    """Why Loupe must not connect to this address, or None for a public address."""
    if allow_loopback and (
        (isinstance(address, ipaddress.IPv4Address) and address in IPV4_LOOPBACK)
        or address == IPV6_LOOPBACK
    ):
        return None
    if isinstance(address, ipaddress.IPv6Address):
        reason = _embedded_ipv4_reason(address)
        if reason:
            return reason
    if address.is_unspecified:
        return Text("an unspecified address")
    if address.is_loopback:
        return Text("a loopback address (this machine)")
    if address.is_link_local:
        return Text("a link-local address")
    if address.is_multicast:
        return Text("a multicast address")
    if isinstance(address, ipaddress.IPv4Address) and address in SHARED_ADDRESS_SPACE:
        return Text("in the shared address space %(net)s (carrier-grade NAT)", net="100.64.0.0/10")
    if isinstance(address, ipaddress.IPv6Address) and address in NAT64_LOCAL_USE:
        return Text("in the local-use NAT64 prefix %(net)s", net="64:ff9b:1::/48")
    if address.is_reserved:
        return Text("a reserved address")
    if address.is_private:
        return Text("a private address")
    if not address.is_global:
        return Text("not a public address")
    return None


def _embedded_ipv4_reason(address: ipaddress.IPv6Address) -> Text | None:
    """IPv6 forms that carry an IPv4 address reach that IPv4 address; judge it instead.

    Loopback stays forbidden inside these forms even when URL_ALLOW_LOOPBACK is on: the
    setting is for 127.0.0.1 and ::1 as written, not for disguises of them.
    """
    forms: list[tuple[str, ipaddress.IPv4Address]] = []
    if address.ipv4_mapped is not None:
        forms.append(("IPv4-mapped", address.ipv4_mapped))
    if address.sixtofour is not None:
        forms.append(("6to4", address.sixtofour))
    if address.teredo is not None:
        server, client = address.teredo
        forms += [("Teredo server", server), ("Teredo client", client)]
    low32 = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address in NAT64_WELL_KNOWN:
        forms.append(("NAT64", low32))
    if address in IPV4_COMPATIBLE and int(address) > 1:  # not :: or ::1
        forms.append(("IPv4-compatible", low32))
    for form, ipv4 in forms:
        reason = forbidden_reason(ipv4)
        if reason:
            return Text(
                "%(address)s in %(form)s form, %(reason)s",
                address=str(ipv4),
                form=form,
                reason=reason,
            )
    return None


Resolver = Callable[..., list[tuple[Any, ...]]]


def check_url(url: str, *, resolve: Resolver | None = None) -> CheckedUrl:
    """Refuse the URL unless its form is allowed and every address of its host is public.

    `resolve` stands in for socket.getaddrinfo (which it defaults to) in tests.
    """
    parts = parse_url(url)
    resolve = resolve or socket.getaddrinfo
    host = parts.hostname or ""
    scheme = parts.scheme.lower()
    port = parts.port or (443 if scheme == "https" else 80)
    try:
        infos = resolve(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise HostNotFound(
            Text("The host %(host)s could not be found (%(error)s).", host=host, error=str(exc))
        ) from exc
    addresses: list[str] = []
    for info in infos:
        raw = str(info[4][0]).split("%", 1)[0]  # drop an IPv6 zone (fe80::1%eth0)
        address = ipaddress.ip_address(raw)
        reason = forbidden_reason(address, allow_loopback=settings.URL_ALLOW_LOOPBACK)
        if reason:
            shown = (
                host
                if host == raw
                else Text("%(host)s (address %(address)s)", host=host, address=raw)
            )
            raise UrlRefused(
                Text("Loupe does not fetch %(host)s: it is %(reason)s.", host=shown, reason=reason)
            )
        if raw not in addresses:
            addresses.append(raw)
    if not addresses:
        raise HostNotFound(Text("The host %(host)s has no address.", host=host))
    # Quoted for the request line; existing %-escapes and reserved characters stay as they are.
    target = quote(parts.path or "/", safe=URL_SAFE)
    if parts.query:
        target += "?" + quote(parts.query, safe=URL_SAFE)
    return CheckedUrl(
        url=url.strip(),
        scheme=scheme,
        host=host,
        port=port,
        target=target,
        addresses=tuple(addresses),
    )
