"""Twenty people signing in at once all get in. Each sign-in hashes a password for most of
a second of CPU while it holds a database connection; twenty at once on two cores held the
pool's connections so long that others waited past DATABASE_POOL_TIMEOUT and were told the
database was unreachable. Sign-ins now take turns (limits/views.py), holding no connection
while they wait."""

from __future__ import annotations

import http.cookiejar
import re
import subprocess
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import PBKDF2PasswordHasher

from ops.serving import web_command
from ops.tests.stack import REPO, free_port, production_env, stop, wait_for_server

PEOPLE = 20
PASSWORD = "a-long-enough-password-123"
HOST = {"Host": "loupe.example.org"}


def sign_in_form(base: str, username: str) -> tuple[urllib.request.OpenerDirector, bytes]:
    """A browser with the sign-in page open: its cookies, and the form it will post."""
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    request = urllib.request.Request(f"{base}/login/", headers=HOST)
    with opener.open(request, timeout=60) as page:
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.read().decode())
    assert token
    form = {"username": username, "password": PASSWORD, "csrfmiddlewaretoken": token.group(1)}
    return opener, urllib.parse.urlencode(form).encode()


def sign_in(base: str, opener: urllib.request.OpenerDirector, form: bytes) -> str:
    """Where the sign-in ended: the notebooks page, or a status code."""
    request = urllib.request.Request(f"{base}/login/", data=form, headers=HOST)
    try:
        with opener.open(request, timeout=120) as response:
            return urllib.parse.urlsplit(response.url).path
    except urllib.error.HTTPError as exc:
        return str(exc.code)


@pytest.mark.django_db(transaction=True)
def test_twenty_sign_ins_at_once_all_succeed(tmp_path):
    # The server's own hasher (the tests' is a fast one), at its full cost.
    hasher = PBKDF2PasswordHasher()
    hashed = hasher.encode(PASSWORD, hasher.salt())
    get_user_model().objects.bulk_create(
        get_user_model()(username=f"person{n}", password=hashed) for n in range(PEOPLE)
    )
    port = free_port()
    # A pool smaller than the crowd, as on a small server: sign-ins that held connections
    # while hashing left the others waiting past DATABASE_POOL_TIMEOUT.
    env = production_env(tmp_path, SECURE_COOKIES="false", DATABASE_POOL_SIZE="4")
    server = subprocess.Popen(
        web_command(host="127.0.0.1", port=port),
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for_server(f"{base}/login/", server)
        browsers = [sign_in_form(base, f"person{n}") for n in range(PEOPLE)]
        with ThreadPoolExecutor(PEOPLE) as pool:
            statuses = list(pool.map(lambda browser: sign_in(base, *browser), browsers))
    finally:
        stop(server)

    assert statuses == ["/notebooks/"] * PEOPLE
