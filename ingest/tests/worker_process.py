"""A real worker process for tests: started on the test database, waited on, stopped."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings

from ops.tests.stack import database_url

REPO = Path(__file__).resolve().parents[2]


def start_worker(command: str = "worker", **env: str) -> subprocess.Popen:
    """`manage.py worker` (or another worker command) on the ingest queue."""
    environment = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "OPENAI_BASE_URL": settings.OPENAI_BASE_URL,
        "OPENAI_API_KEY": "test",
        "CHAT_MODEL": "fake-chat",
        "EMBEDDING_MODEL": "fake-embed",
        "EMBEDDING_DIMENSIONS": "64",
        "SOURCE_SUMMARIES": "extractive",
        "SIMILARITY_FLOOR": "0",
        "MODEL_PRICES": (
            '{"fake-chat": {"input_per_million": "2", "output_per_million": "8"},'
            ' "fake-embed": {"input_per_million": "0.1"}}'
        ),
        "MEDIA_ROOT_OVERRIDE": str(settings.MEDIA_ROOT),
        **env,
    }
    code = (
        "import os, sys; from django.conf import settings;"
        "settings.MEDIA_ROOT = os.environ['MEDIA_ROOT_OVERRIDE'];"
        "from django.core.management import call_command;"
        f"call_command({command!r}, '--queues', 'ingest', '--concurrency', '1')"
    )
    return subprocess.Popen(
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=REPO,
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def stop(worker: subprocess.Popen) -> None:
    if worker.poll() is None:
        worker.kill()
    worker.wait(timeout=10)


def wait_until(predicate, *, seconds: float, what: str, worker: subprocess.Popen) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        if worker.poll() is not None:
            assert worker.stderr is not None
            errors = worker.stderr.read().decode(errors="replace")[-6000:]
            pytest.fail(f"the worker ended (status {worker.returncode}) before {what}:\n{errors}")
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        time.sleep(0.1)
