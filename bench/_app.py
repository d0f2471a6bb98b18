"""Shared by the benchmarks that drive the running app over HTTP (stream_overhead, load):
the environment that points it at the test OpenAI server, `manage.py serve` started and
stopped, users with notebooks of real text, signed-in HTTP clients, and peak memory."""

from __future__ import annotations

import contextlib
import json
import math
import os
import random
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from _setup import ROOT, SHARED, django_setup

COVID = SHARED / "qa" / "covid-qa-dev"
PRICES = {
    "fake-chat": {"input_per_million": "2", "output_per_million": "8"},
    "fake-embed": {"input_per_million": "0.1"},
}


def app_environment(base_url: str) -> dict[str, str]:
    """The settings (environment variables) of the app under test and of this process:
    every model is the test OpenAI server at `base_url`."""
    return {
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "LOUPE_DATA_DIR": os.environ.get("LOUPE_DATA_DIR", "/tmp/loupe-bench"),
        "LOG_LEVEL": "WARNING",
        # As in production: `manage.py serve` turns DEBUG on for a laptop unless told, and
        # DEBUG keeps every query's SQL in memory and wraps every cursor.
        "DEBUG": "false",
        "OPENAI_BASE_URL": base_url,
        "OPENAI_API_KEY": "test",
        "CHAT_MODEL": "fake-chat",
        "EMBEDDING_MODEL": "fake-embed",
        "EMBEDDING_DIMENSIONS": "384",
        # A chat call per source would take the answers' scripted replies.
        "SOURCE_SUMMARIES": "extractive",
        # The fake vectors have no negative component: every similarity is >= 0.
        "SIMILARITY_FLOOR": "0",
        "MODEL_PRICES": json.dumps(PRICES),
        # One benchmark user asks faster than a person may (30/minute): the limiter still
        # counts every question (its cost is measured), but never refuses one.
        "RATE_LIMIT_ASK": "100000/minute",
        "RATE_LIMIT_UPLOAD": "100000/minute",
    }


def setup_django(base_url: str) -> None:
    os.environ.update(app_environment(base_url))
    django_setup()
    from library import embedding_state

    active = embedding_state.active().name
    if active != "fake-embed":
        sys.exit(
            f"The data folder {os.environ['LOUPE_DATA_DIR']} searches vectors of {active}; "
            "these benchmarks need fake-embed. Use a fresh LOUPE_DATA_DIR."
        )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Served:
    """`manage.py serve` running: its URL and the pids of its web and worker processes."""

    url: str
    process: subprocess.Popen[bytes]
    pids: dict[str, int]

    def cpu_seconds(self) -> dict[str, float]:
        """CPU time (user + system) each process has used so far."""
        ticks = os.sysconf("SC_CLK_TCK")
        used = {}
        for name, pid in self.pids.items():
            # The fields after the command name (which may hold spaces) in parentheses.
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            used[name] = (int(fields[11]) + int(fields[12])) / ticks  # utime, stime
        return used

    def peak_rss_mb(self) -> dict[str, float]:
        """VmHWM (the kernel's peak resident set) of each process, read while it runs."""
        peaks = {}
        for name, pid in self.pids.items():
            status = Path(f"/proc/{pid}/status").read_text()
            line = next(line for line in status.splitlines() if line.startswith("VmHWM:"))
            peaks[name] = int(line.split()[1]) / 1024  # kB
        return peaks


@contextlib.contextmanager
def serving(base_url: str, *, worker: bool) -> Iterator[Served]:
    """`manage.py serve` (uvicorn, and the Procrastinate worker unless `worker` is False),
    as `make run` starts it, on a free port; stopped after."""
    port = free_port()
    command = [sys.executable, "manage.py", "serve", "--port", str(port)]
    if not worker:
        command.append("--no-worker")
    env = {**os.environ, **app_environment(base_url)}
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                sys.exit(f"manage.py serve exited ({process.returncode})")
            with contextlib.suppress(OSError):
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            if time.monotonic() > deadline:
                sys.exit("manage.py serve did not listen within 60 s")
            time.sleep(0.2)
        children = Path(f"/proc/{process.pid}/task/{process.pid}/children").read_text().split()
        # Without the worker, serve becomes the web server itself (exec).
        pids = {"web": process.pid}
        for pid in map(int, children):
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            # serve's worker is `manage.py worker` (which runs Procrastinate's worker).
            is_worker = b"worker" in cmdline or b"procrastinate" in cmdline
            pids["worker" if is_worker else "web"] = pid
        yield Served(url=url, process=process, pids=pids)
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)  # serve stops both children
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()


def covid_items() -> dict[str, list[str]]:
    """covid-qa-dev questions by document id."""
    items: dict[str, list[str]] = {}
    for line in (COVID / "items.jsonl").read_text().splitlines():
        item = json.loads(line)
        items.setdefault(item["doc_id"], []).append(item["question"])
    return items


@dataclass
class Asker:
    """A user with a notebook of ready covid-qa documents and questions about them."""

    username: str
    notebook_id: int
    questions: list[str]
    session: str = ""


def make_askers(count: int, *, docs_per_user: int = 3, prefix: str = "bench-asker") -> list[Asker]:
    """`count` users, each with a notebook of `docs_per_user` covid-qa documents, processed
    here with the fake embedder. Kept in the data folder and reused by later runs."""
    from django.contrib.auth import get_user_model
    from django.core.files.base import ContentFile

    from billing.services import balance, grant_credit
    from ingest.services import add_source, process_source
    from library.models import Source
    from notebooks.models import Notebook

    items = covid_items()
    doc_ids = sorted(items, key=lambda doc: (-len(items[doc]), doc))
    askers = []
    for index in range(count):
        user, _ = get_user_model().objects.get_or_create(username=f"{prefix}-{index:03d}")
        if balance(user) < 1:  # earlier runs spent it
            grant_credit(user=user, amount=Decimal(5) - balance(user), reason="benchmark")
        notebook, _ = Notebook.objects.get_or_create(owner=user, title="Benchmark")
        docs = [doc_ids[(index * docs_per_user + n) % len(doc_ids)] for n in range(docs_per_user)]
        ready = notebook.sources.filter(status=Source.Status.READY).count() == docs_per_user
        for doc in [] if ready else docs:
            name = f"{doc}.txt"
            added = add_source(
                owner=user,
                notebook=notebook,
                upload=ContentFile((COVID / "docs" / name).read_bytes(), name=name),
            )
            source = process_source(source_id=added.source.pk)
            if source.status != Source.Status.READY:
                sys.exit(f"{name} did not become ready: {source.error}")
        questions = [question for doc in docs for question in items[doc]]
        random.Random(index).shuffle(questions)
        askers.append(Asker(user.username, notebook.pk, questions, session=sign_in(user)))
    return askers


def sign_in(user: Any) -> str:
    """A session cookie for `user`, made as the sign-in form makes it (force_login skips
    only the password hash, ~0.5 s of CPU per user, which is not what is measured)."""
    from django.conf import settings
    from django.test import Client

    client = Client()
    client.force_login(user)
    return client.cookies[settings.SESSION_COOKIE_NAME].value


def answer_text(words: int, seed: int) -> str:
    """A model reply of about `words` words citing passages [1] and [2]."""
    rng = random.Random(seed)
    vocabulary = "the virus spreads through droplets and close contact while symptoms include "
    vocabulary += "fever cough and fatigue studies report that patients recover within two weeks"
    words_list = vocabulary.split()
    half = max(1, words // 2)
    first = " ".join(rng.choice(words_list) for _ in range(half))
    second = " ".join(rng.choice(words_list) for _ in range(words - half))
    return f"{first.capitalize()} [1]. {second.capitalize()} [2]."


def percentile(values: list[float], fraction: float) -> float:
    """The nearest-rank percentile (fraction 0.95 for p95)."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]
