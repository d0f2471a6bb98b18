"""`manage.py serve` with no chat model configured runs the local model server as its child
(the smallest packaged model here), says so in the first-run box and /healthz, and stops it
with itself."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ops.tests.stack import REPO, database_url, free_port, get, stop
from providers.local_model import PACKAGED_MODELS

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(600)]
SMALLEST = PACKAGED_MODELS[-1]


def test_serve_runs_the_local_model_and_shows_it(tmp_path):
    if not SMALLEST.installed():
        pytest.fail(f"{SMALLEST.name} is not installed: make install-dev installs it")
    port = free_port()
    environment = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "LOUPE_DATA_DIR": str(tmp_path),
        "DATABASE_URL": database_url(),
        "LOCAL_CHAT_MODEL": SMALLEST.name,
        "LOCAL_CHAT_CONTEXT_TOKENS": "2048",
    }
    serve = subprocess.Popen(
        [sys.executable, "manage.py", "serve", "--port", str(port)],
        cwd=REPO,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    output = b""
    try:
        assert serve.stdout is not None
        os.set_blocking(serve.stdout.fileno(), False)
        deadline = time.monotonic() + 300
        while b"Chat model:" not in output or "┘".encode() not in output:
            assert time.monotonic() < deadline, output.decode()
            assert serve.poll() is None, output.decode()
            output += serve.stdout.read() or b""
            time.sleep(0.5)
        box = output.decode()
        assert "Chat model: on: SmolLM2-135M-Instruct Q4_1, local" in box

        status, body = get(f"http://127.0.0.1:{port}/healthz")
        assert json.loads(body)["checks"]["chat"] == ("local SmolLM2-135M-Instruct Q4_1: ready"), (
            body
        )
        pid = json.loads((tmp_path / "local-model" / "status.json").read_text())["pid"]
        assert Path(f"/proc/{pid}").exists()
    finally:
        if serve.poll() is None:
            os.killpg(serve.pid, signal.SIGTERM)
        stop(serve)
    assert not (tmp_path / "local-model" / "status.json").exists()
    assert not Path(f"/proc/{pid}").exists()  # stopped with serve
