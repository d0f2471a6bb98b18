"""X-Forwarded-Proto counts only with TRUST_X_FORWARDED_PROTO: uvicorn alone believed it
from any program on 127.0.0.1, and a plain-HTTP request then got HSTS and counted as
HTTPS. X-Forwarded-For names the client only from a proxy in FORWARDED_ALLOW_IPS."""

from __future__ import annotations

import asyncio
import subprocess
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest

from config.proxy import ProxyHeaders
from ops.serving import web_command
from ops.tests.stack import REPO, free_port, production_env, stop, wait_for_server

NO_DATABASE = "postgresql://loupe@127.0.0.1:9/loupe"  # the sign-in page needs none


def headers_of_the_sign_in_page(tmp_path, **env: str):
    """The response's headers (case-insensitive, as HTTP's are)."""
    port = free_port()
    server = subprocess.Popen(
        web_command(host="127.0.0.1", port=port),
        cwd=REPO,
        env=production_env(tmp_path, DATABASE_URL=NO_DATABASE, **env),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_server(f"http://127.0.0.1:{port}/login/", server)
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/login/",
            headers={"Host": "loupe.example.org", "X-Forwarded-Proto": "https"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.headers
    finally:
        stop(server)


def test_a_forwarded_https_is_not_believed_unless_the_setting_says_so(tmp_path):
    headers = headers_of_the_sign_in_page(tmp_path, TRUST_X_FORWARDED_PROTO="false")

    assert headers["Strict-Transport-Security"] is None


def test_a_trusted_proxy_makes_the_request_https(tmp_path):
    headers = headers_of_the_sign_in_page(tmp_path, TRUST_X_FORWARDED_PROTO="true")

    assert headers["Strict-Transport-Security"].startswith("max-age=31536000")


def seen_by_the_app(scope: dict) -> dict:
    seen: dict = {}

    async def app(scope, receive, send):
        seen.update(scope)

    # On a loop of its own, in a thread of its own: a browser test's session keeps an event
    # loop running in this thread, where async_to_sync refuses to run.
    with ThreadPoolExecutor(1) as thread:
        thread.submit(asyncio.run, ProxyHeaders(app)(scope, None, None)).result()
    return seen


def request_from(address: str) -> dict:
    return {
        "type": "http",
        "scheme": "http",
        "client": (address, 40000),
        "headers": [(b"x-forwarded-for", b"203.0.113.9"), (b"x-forwarded-proto", b"https")],
    }


@pytest.mark.parametrize("trusted", [False, True])
def test_the_client_address_comes_from_a_trusted_proxy_only(settings, trusted):
    settings.TRUST_X_FORWARDED_PROTO = trusted

    proxied = seen_by_the_app(request_from("127.0.0.1"))
    direct = seen_by_the_app(request_from("198.51.100.7"))

    assert proxied["client"][0] == "203.0.113.9"
    assert proxied["scheme"] == ("https" if trusted else "http")
    assert direct["client"][0] == "198.51.100.7"
    assert direct["scheme"] == "http"
