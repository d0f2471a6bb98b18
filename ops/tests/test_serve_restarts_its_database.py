"""`manage.py serve` (what `make run` starts) starts the embedded PostgreSQL again when it
dies: its postmaster killed with SIGKILL, pages answer 503 for a moment, then work again
without anyone running a command."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

from ops.tests.outage import embedded_only
from ops.tests.stack import REPO, free_port, get, stop, wait_for_server


def postmaster_pid(data) -> int:
    return int((data / "pgdata" / "postmaster.pid").read_text().split()[0])


@embedded_only
def test_a_killed_embedded_database_is_started_again(tmp_path):
    data = tmp_path / "var"
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path),
        "LOUPE_DATA_DIR": str(data),
        "LOCAL_CHAT_MODEL": "off",
    }
    migrate = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert migrate.returncode == 0, migrate.stderr
    port = free_port()
    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        serve = subprocess.Popen(
            [sys.executable, "manage.py", "serve", "--port", str(port)],
            cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        wait_for_server(f"http://127.0.0.1:{port}/login/", serve)
        assert (
            json.loads(get(f"http://127.0.0.1:{port}/healthz", 30)[1])["checks"]["database"] == "ok"
        )
        killed = postmaster_pid(data)

        os.kill(killed, signal.SIGKILL)

        # The killed postmaster's backends may serve a connection already open for a moment:
        # done when a new postmaster runs and the pages reach it.
        deadline = time.monotonic() + 90
        while True:
            assert time.monotonic() < deadline, log.read_text()[-3000:]
            status, body = get(f"http://127.0.0.1:{port}/healthz", 30)
            restarted = (data / "pgdata" / "postmaster.pid").exists() and (
                postmaster_pid(data) != killed
            )
            # serve says so once its start returns, a moment after the new postmaster runs.
            said = "the embedded PostgreSQL had stopped; started it again" in log.read_text()
            if restarted and said and json.loads(body)["checks"]["database"] == "ok":
                break
            time.sleep(1)
        assert serve.poll() is None
    finally:
        stop(serve)
        subprocess.run(
            [sys.executable, "-m", "config.database", "stop"], cwd=REPO, env=env, check=False
        )
