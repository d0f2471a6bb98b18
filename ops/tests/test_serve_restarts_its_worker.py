"""`manage.py serve` (what `make run` starts) outlives its worker: a worker killed with
SIGKILL is started again, with a log line, while the web server keeps answering; and it
shows Django's debug pages only when DEBUG is asked for."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.db import connection

from ops.tests.stack import REPO, database_url, free_port, get, stop, wait_for_server

pytestmark = pytest.mark.django_db(transaction=True)


def children(pid: int) -> dict[int, str]:
    """The process's children and their command lines (from /proc: no extra package)."""
    found: dict[int, str] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            cmdline = Path(f"/proc/{child}/cmdline").read_bytes().replace(b"\0", b" ")
            found[int(child)] = cmdline.decode(errors="replace")
    return found


def worker_pid(serve: subprocess.Popen[bytes]) -> int | None:
    workers = [pid for pid, cmd in children(serve.pid).items() if "manage.py worker" in cmd]
    return workers[0] if workers else None


def start_serve(
    tmp_path: Path, *options: str, **env: str
) -> tuple[subprocess.Popen[bytes], int, Path]:
    port = free_port()
    log = tmp_path / "serve.log"
    environment = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "LOUPE_DATA_DIR": str(tmp_path),
        "DATABASE_URL": database_url(),
        # The local model server is tested on its own (test_serve_runs_the_local_model.py).
        "LOCAL_CHAT_MODEL": "off",
        **env,
    }
    with log.open("wb") as out:
        serve = subprocess.Popen(
            [sys.executable, "manage.py", "serve", "--port", str(port), *options],
            cwd=REPO,
            env=environment,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    wait_for_server(f"http://127.0.0.1:{port}/healthz", serve)
    return serve, port, log


def test_a_killed_worker_is_started_again_and_the_web_server_keeps_serving(tmp_path):
    serve, port, log = start_serve(tmp_path)
    try:
        deadline = time.monotonic() + 30
        while (first := worker_pid(serve)) is None:
            assert time.monotonic() < deadline, "serve started no worker"
            time.sleep(0.2)

        subprocess.run(["kill", "-KILL", str(first)], check=True)

        deadline = time.monotonic() + 30
        while (second := worker_pid(serve)) in (None, first):
            assert serve.poll() is None, f"serve exited ({serve.returncode}):\n{log.read_text()}"
            assert time.monotonic() < deadline, f"no new worker:\n{log.read_text()}"
            time.sleep(0.2)
        status, body = get(f"http://127.0.0.1:{port}/no-such-page/")
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.wait(timeout=30)
        with connection.cursor() as cursor:
            # The killed worker's row would look alive to the next tests for a while.
            cursor.execute("DELETE FROM procrastinate_workers")
    text = log.read_text()
    assert f"the worker exited (-{signal.SIGKILL.value}); starting it again in 1 s" in text
    assert f"started the worker again (pid {second})" in text
    assert status == 404
    assert b"Using the URLconf defined in" not in body  # no debug page unless asked for


def test_django_debug_pages_only_with_debug_asked_for(tmp_path):
    serve, port, _ = start_serve(tmp_path, "--no-worker", DEBUG="true")
    try:
        status, body = get(f"http://127.0.0.1:{port}/no-such-page/")
    finally:
        stop(serve)
    assert status == 404
    assert b"Using the URLconf defined in" in body
