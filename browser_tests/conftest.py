"""Loupe served for real to a real browser: uvicorn (ASGI, as `manage.py serve` runs it) and
a Procrastinate worker as subprocesses against the test database, the fake OpenAI-compatible
server for the models, and Debian's Chromium driven by Playwright.

The servers start once per session; each test is transactional (its rows are committed, so
the server processes see them, and flushed after it).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

import pytest
from django.contrib.auth import get_user_model
from django.db import connection

from ops.tests.stack import database_url, free_port
from providers.tests.fake_openai import FakeOpenAI

ROOT = Path(__file__).resolve().parents[1]
SCREENSHOTS = ROOT / "docs" / "screenshots"
CHROMIUM = os.environ.get("LOUPE_CHROMIUM", "/usr/bin/chromium")
PASSWORD = "browser-pass-123"

# Records every upload progress bar the page shows.
WATCH_UPLOADS = """() => {
  window.uploadBars = 0;
  new MutationObserver((mutations) => {
    for (const mutation of mutations) {
      for (const node of mutation.addedNodes) {
        if (node.querySelector && node.querySelector("progress")) window.uploadBars += 1;
      }
    }
  }).observe(document.getElementById("upload-progress"), {childList: true});
}"""


class LiveLoupe:
    def __init__(self, url: str, models: FakeOpenAI, data_dir: Path) -> None:
        self.url = url
        self.models = models
        self.data_dir = data_dir
        self.logs = data_dir / "logs"
        self.processes: dict[str, subprocess.Popen] = {}
        self.commands: dict[str, list[str]] = {}
        self.env: dict[str, str] = {}

    def start(self, name: str) -> None:
        with open(self.logs / f"{name}.log", "ab") as log:
            self.processes[name] = subprocess.Popen(
                self.commands[name], cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT
            )

    def restart_worker(self) -> None:
        """A new worker: the one running through a database outage may be stuck on its lost
        connection, or exit a little later."""
        worker = self.processes["worker"]
        if worker.poll() is None:
            worker.terminate()
            try:
                worker.wait(timeout=15)
            except subprocess.TimeoutExpired:
                worker.kill()
                worker.wait()
        self.start("worker")

    def restart_the_exited_worker(self) -> None:
        """The worker exits when the database goes away (a test of an outage stops it), as
        it does in production, where `serve` starts it again: so does this, between tests."""
        worker = self.processes.get("worker")
        if worker is not None and worker.poll() is not None:
            self.start("worker")

    def log_tail(self) -> str:
        parts = []
        for log in sorted(self.logs.glob("*.log")):
            parts.append(f"--- {log.name} ---\n{log.read_text(errors='replace')[-4000:]}")
        return "\n".join(parts)


def _wait_until_serving(url: str, processes: dict[str, subprocess.Popen], live: LiveLoupe) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        for name, process in processes.items():
            if process.poll() is not None:
                pytest.fail(f"The {name} process exited ({process.returncode}):\n{live.log_tail()}")
        try:
            with urllib.request.urlopen(url + "/login/", timeout=5) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.3)
    pytest.fail(f"Loupe did not answer at {url} within 120 s:\n{live.log_tail()}")


@pytest.fixture(scope="session")
def live_loupe(django_db_setup, django_db_blocker, tmp_path_factory) -> Iterator[LiveLoupe]:
    if not os.access(CHROMIUM, os.X_OK):
        # Fail, never skip: a missing browser must not pass as a green run.
        pytest.fail(
            f"The browser tests need Chromium at {CHROMIUM}; run scripts/install-system-packages "
            "(Debian: apt-get install chromium)."
        )
    with django_db_blocker.unblock():
        database = database_url(connection.settings_dict)
    data_dir = tmp_path_factory.mktemp("live-loupe")
    logs = data_dir / "logs"
    logs.mkdir()
    with FakeOpenAI.running() as models:
        env = {
            **os.environ,
            "LOUPE_DATA_DIR": str(data_dir),
            "DATABASE_URL": database,
            "DEBUG": "false",
            "OPENAI_BASE_URL": models.base_url,
            "OPENAI_API_KEY": "test",
            "CHAT_MODEL": "fake-chat",
            "EMBEDDING_MODEL": "fake-embed",
            "EMBEDDING_DIMENSIONS": "64",
            "SOURCE_SUMMARIES": "extractive",
            "SIMILARITY_FLOOR": "0",
            "OPENAI_MAX_RETRIES": "1",
            "OPENAI_TIMEOUT_SECONDS": "20",
            "MODEL_PRICES": json.dumps(
                {
                    "fake-chat": {"input_per_million": "2", "output_per_million": "8"},
                    "fake-embed": {"input_per_million": "0.1"},
                }
            ),
            "PYTHONUNBUFFERED": "1",
        }
        python = sys.executable
        subprocess.run(
            [python, "manage.py", "collectstatic", "--noinput", "--verbosity", "0"],
            cwd=ROOT,
            env=env,
            check=True,
        )
        port = free_port()
        commands = {
            "web": [
                python,
                "-m",
                "uvicorn",
                "config.asgi:application",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
            ],
            "worker": [python, "manage.py", "procrastinate", "worker"],
        }
        live = LiveLoupe(f"http://127.0.0.1:{port}", models, data_dir)
        live.commands, live.env = commands, env
        processes = live.processes
        try:
            for name in commands:
                live.start(name)
            _wait_until_serving(live.url, processes, live)
            yield live
        finally:
            for process in processes.values():
                process.terminate()
            for process in processes.values():
                try:
                    process.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    process.kill()
            shutil.rmtree(data_dir / "staticfiles", ignore_errors=True)


@pytest.fixture(scope="session")
def browser(live_loupe):
    from playwright.sync_api import sync_playwright

    # Playwright's sync API runs an event loop in this thread, and Django refuses ORM calls
    # from a thread with a running loop; the tests' own queries are plain sync code.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            chromium = playwright.chromium.launch(
                executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"]
            )
            yield chromium
            chromium.close()
    finally:
        if previous is None:
            del os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"]
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture
def fast_password_hashing():
    """The server processes check passwords with the default hashers, so the users these
    tests make must be hashed with them too (the root conftest's MD5 would not sign in)."""


@pytest.fixture
def live(live_loupe, transactional_db, settings) -> Iterator[LiveLoupe]:
    """The live app for one test, the model server's script and pace reset. Files the test
    itself stores go where the server processes read them."""
    settings.MEDIA_ROOT = live_loupe.data_dir / "uploads"
    live_loupe.restart_the_exited_worker()
    models = live_loupe.models
    models.chat_replies.clear()
    models.stream_delay = 0.0
    yield live_loupe
    models.chat_replies.clear()
    models.stream_delay = 0.0


@dataclass(frozen=True)
class Problem:
    text: str
    status: int | None = None  # of an answer 4xx/5xx, and the URL it answered
    url: str = ""


# How long a page stays watched after its test's last step: the sources and notes lists
# poll every 2 s, and what a poll or its swap gets wrong must fail the test too.
QUIET_PERIOD_MS = 2_500


class Console:
    """What went wrong on a page, as its browser saw it: uncaught script errors, console
    errors (a Content-Security-Policy violation among them) and requests that failed or
    were answered 4xx/5xx. Every test's pages must end with none of them, except the
    answers the test is about (`page.console.expect(404, "/notebooks/7/")`)."""

    def __init__(self) -> None:
        self.problems: list[Problem] = []
        self.expected: set[tuple[int, str]] = set()

    def expect(self, status: int, path: str) -> None:
        self.expected.add((status, path))

    def unexpected(self) -> list[str]:
        return [
            problem.text
            for problem in self.problems
            if (problem.status, urlparse(problem.url).path) not in self.expected
        ]

    def watch(self, page) -> None:
        page.on("pageerror", lambda error: self.problems.append(Problem(f"script error: {error}")))
        page.on("console", self._console)
        page.on("requestfailed", self._failed)
        page.on("response", self._response)

    def _console(self, message) -> None:
        if message.type != "error":
            return
        url = message.location.get("url", "")
        status = None
        # Chromium reports each 4xx/5xx answer here too ("Failed to load resource"), and
        # htmx the answers it was told to treat as errors (a 429 refusal's notice).
        if loaded := re.search(r"status of (\d{3})", message.text):
            status = int(loaded.group(1))
        elif swapped := re.search(r"Response Status Error Code (\d{3}) from (\S+?),", message.text):
            status, url = int(swapped.group(1)), swapped.group(2)
        self.problems.append(Problem(f"console error: {message.text} ({url})", status, url))

    def _response(self, response) -> None:
        if response.status >= 400:
            text = f"HTTP {response.status}: {response.request.method} {response.url}"
            self.problems.append(Problem(text, response.status, response.url))

    def _failed(self, request) -> None:
        failure = request.failure or ""
        # A request the page itself gave up (a stopped answer, a poll cut by leaving the
        # page) is no fault.
        if "ERR_ABORTED" in failure:
            return
        self.problems.append(Problem(f"request failed: {request.method} {request.url} ({failure})"))


@pytest.fixture
def page_for(browser, live):
    """`page_for(username, **context_options)`: a new browser page signed in as that user
    (created with PASSWORD if missing), through the sign-in form. After the test, its pages
    stay open for a few polls, and must have had no script or console error and no failed
    request (Console)."""
    contexts = []
    pages = []

    def open_page(username: str | None = None, **options):
        context = browser.new_context(base_url=live.url, **options)
        context.set_default_timeout(20_000)
        contexts.append(context)
        page = context.new_page()
        page.console = Console()
        page.console.watch(page)
        pages.append(page)
        if username:
            get_user_model().objects.filter(username=username).exists() or (
                get_user_model().objects.create_user(username=username, password=PASSWORD)
            )
            sign_in(page, username)
        return page

    yield open_page
    for page in pages:
        if not page.is_closed():
            page.wait_for_timeout(QUIET_PERIOD_MS)
    problems = [problem for page in pages for problem in page.console.unexpected()]
    for context in contexts:
        context.close()
    assert not problems, "the browser reported:\n" + "\n".join(problems)


def sign_in(page, username: str) -> None:
    page.goto("/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click("form.stack button[type=submit]")
    page.wait_for_url("**/notebooks/")
