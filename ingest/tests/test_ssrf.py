"""SSRF: every spelling of a forbidden address, and redirects into each kind of them.

Complements test_url_guard.py (the guard's address classes) and test_url_fetch.py (DNS
rebinding against a pinned connection). The spellings go through the real resolver
(getaddrinfo parses numeric hosts itself, as inet_aton does: no DNS query is sent)."""

from __future__ import annotations

import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest

import ingest.fetch
from ingest.fetch import fetch
from ingest.services import add_url, process_source
from ingest.url_guard import UrlRefused, check_url
from library.models import Source

SPELLINGS = [
    # 127.0.0.1
    ("http://0177.0.0.1/", "loopback"),  # octal
    ("http://0177.1/", "loopback"),  # octal, short form
    ("http://017700000001/", "loopback"),  # one octal number
    ("http://0x7f000001/", "loopback"),  # one hex number
    ("http://0x7f.0x0.0x0.0x1/", "loopback"),  # hex parts
    ("http://127.1/", "loopback"),  # short form
    ("http://LOCALHOST/", "loopback"),
    ("http://[0:0:0:0:0:ffff:127.0.0.1]/", "IPv4-mapped"),
    ("http://[::ffff:7f00:1]/", "IPv4-mapped"),
    ("http://[0000::1]/", "loopback"),
    # 169.254.169.254, the cloud metadata endpoint
    ("http://2852039166/", "link-local"),  # decimal
    ("http://0xa9fea9fe/", "link-local"),  # hex
    ("http://0251.0376.0251.0376/", "link-local"),  # octal
    ("http://169.254.43518/", "link-local"),  # last two parts as one number
    ("http://[::ffff:a9fe:a9fe]/", "IPv4-mapped"),
    ("http://[fd00:ec2::254]/", "private"),  # the IPv6 metadata endpoint of one cloud
    # private networks
    ("http://3232235777/", "private"),  # 192.168.1.1 as one number
    ("http://0xc0a80101/", "private"),  # 192.168.1.1 in hex
    ("http://10.1/", "private"),  # 10.0.0.1, short form
    ("http://012.0.0.1/", "private"),  # 10.0.0.1, octal
    ("http://[fc00::1]/", "private"),  # IPv6 unique local
    ("http://0/", "unspecified"),
]


@pytest.mark.parametrize(("url", "reason"), SPELLINGS)
def test_every_spelling_of_a_forbidden_address_is_refused(url, reason, settings):
    settings.URL_ALLOW_LOOPBACK = False

    with pytest.raises(UrlRefused, match=reason):
        check_url(url)


class _Redirector(BaseHTTPRequestHandler):
    """/?to=URL answers 302 to URL; anything else says where it was asked for."""

    def log_message(self, format, *args):
        pass

    def do_GET(self):
        target = parse_qs(urlsplit(self.path).query).get("to")
        if target:
            self.send_response(302)
            self.send_header("Location", target[0])
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = b"<html><title>Local</title><body><p>Reached.</p></body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def redirector(settings):
    # The redirecting server is on loopback, so loopback must be allowed to reach it; the
    # targets below are all other kinds of forbidden address.
    settings.URL_ALLOW_LOOPBACK = True
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Redirector)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def connections(monkeypatch):
    opened = []
    real = socket.create_connection

    def record(address, *args, **kwargs):
        opened.append(address[0])
        return real(address, *args, **kwargs)

    monkeypatch.setattr(ingest.fetch.socket, "create_connection", record)
    return opened


@pytest.mark.parametrize(
    ("target", "reason"),
    [
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("http://2852039166/latest/meta-data/", "link-local"),
        ("http://[fd00:ec2::254]/", "private"),
        ("http://10.0.0.1/", "private"),
        ("http://0xc0a80101/", "private"),
        ("http://[::ffff:10.0.0.1]/", "IPv4-mapped"),
        ("http://[::ffff:127.0.0.1]/", "IPv4-mapped"),  # loopback in disguise stays refused
        ("http://[fe80::1]/", "link-local"),
        ("http://100.64.0.1/", "shared address space"),
        ("file:///etc/passwd", "only http:// and https://"),
    ],
)
def test_a_redirect_into_any_forbidden_address_is_refused_without_connecting(
    redirector, connections, target, reason
):
    with pytest.raises(UrlRefused, match=reason):
        fetch(f"{redirector}?to={target}")

    assert connections == ["127.0.0.1"]  # the redirector only


def test_a_refused_redirect_fails_the_source_with_the_reason(
    redirector, connections, owner, notebook
):
    added = add_url(owner=owner, notebook=notebook, url=f"{redirector}?to=http://169.254.169.254/")

    source = process_source(source_id=added.source.pk)

    assert source.status == Source.Status.FAILED
    assert "Loupe does not fetch 169.254.169.254" in source.error
    assert connections == ["127.0.0.1"]


def test_a_redirect_to_a_name_that_resolves_to_a_private_address_is_refused(
    redirector, connections, monkeypatch
):
    real = socket.getaddrinfo

    def resolve(host, *args, **kwargs):
        if host == "intranet.example":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("192.168.0.10", 80))]
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolve)

    with pytest.raises(UrlRefused, match=r"intranet\.example \(address 192\.168\.0\.10\)"):
        fetch(f"{redirector}?to=http://intranet.example/")

    assert connections == ["127.0.0.1"]
