"""What `manage.py serve` runs: the web server, a worker and the local model server side
by side, each started again when it dies, and the embedded PostgreSQL watched the same way."""

from __future__ import annotations

import logging
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

from providers.local_model_supervisor import LocalModelServer

logger = logging.getLogger(__name__)


def web_command(*, host: str, port: int) -> list[str]:
    """The ASGI server, as `make run` starts it and docker-compose.yml's web container runs
    it (ops/tests check they agree). uvicorn runs WEB_CONCURRENCY processes (default 1)."""
    return [
        sys.executable,
        "-m",
        "uvicorn",
        "config.asgi:application",
        "--host",
        host,
        "--port",
        str(port),
        # On SIGTERM, answers still streaming get this long to finish.
        "--timeout-graceful-shutdown",
        "30",
        # The application reads proxy headers as the settings allow (config/proxy.py).
        "--no-proxy-headers",
    ]


# A worker that crashes is started again after this pause, doubled at each crash in a row
# (up to the maximum), so that one failing at start-up does not spin.
RESTART_PAUSE_SECONDS = 1.0
RESTART_PAUSE_MAX_SECONDS = 60.0
# A worker that ran this long before it crashed starts a new series of pauses.
RAN_WELL_SECONDS = 60.0
# How often the embedded PostgreSQL is looked at (it outlives serve, but dies with an
# out-of-memory kill or a crash like any process); without DATABASE_URL only.
DATABASE_CHECK_SECONDS = 2.0


class DatabaseWatch:
    """Starts the embedded PostgreSQL again when it died, as serve restarts its worker:
    pages and jobs, which retry a lost database, then recover by themselves. `restart`
    starts it if it is down (None: the database is not Loupe's to start)."""

    def __init__(self, restart: Callable[[], object] | None) -> None:
        self.restart = restart
        self.next_check = time.monotonic() + DATABASE_CHECK_SECONDS

    def check(self, now: float) -> None:
        if self.restart is None or now < self.next_check:
            return
        try:
            self.restart()  # it says so in the log when it had to (config/database.py)
        except Exception:
            # Its log (pgdata/log) says why; it is tried again at the next check.
            logger.exception("the embedded PostgreSQL had stopped and did not start again")
        self.next_check = time.monotonic() + DATABASE_CHECK_SECONDS


def supervise(
    web: subprocess.Popen[bytes],
    worker: subprocess.Popen[bytes],
    *,
    worker_started: float,
    worker_argv: list[str],
    environment: dict[str, str],
    model: LocalModelServer | None,
    restart_database: Callable[[], object] | None,
) -> int:
    """Keep the worker (started again from `worker_argv`), the model server and the
    embedded PostgreSQL running until the web server exits, Ctrl-C or SIGTERM; then stop
    them all. The exit status is the web server's when it failed, else 0."""

    def stop(*_: Any) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    exit_code = 0
    pause = RESTART_PAUSE_SECONDS
    restart_at: float | None = None
    database = DatabaseWatch(restart_database)
    try:
        while True:
            database.check(time.monotonic())
            if web.poll() == 0:
                # Stopped, not failed: Ctrl-C reaches the whole process group, and
                # uvicorn may finish before this loop sees its own KeyboardInterrupt.
                logger.info("the web server stopped; stopping the worker")
                break
            if web.poll() is not None:
                logger.error("the web server exited (%s); stopping the worker", web.returncode)
                exit_code = web.returncode
                break
            if model is not None:
                model.check()
            now = time.monotonic()
            if restart_at is None and worker.poll() is not None:
                if now - worker_started > RAN_WELL_SECONDS:
                    pause = RESTART_PAUSE_SECONDS
                logger.error(
                    "the worker exited (%s); starting it again in %.0f s",
                    worker.returncode,
                    pause,
                )
                restart_at = now + pause
                pause = min(pause * 2, RESTART_PAUSE_MAX_SECONDS)
            if restart_at is not None and now >= restart_at:
                worker = subprocess.Popen(worker_argv, env=environment)
                worker_started, restart_at = now, None
                logger.warning("started the worker again (pid %s)", worker.pid)
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        # A second Ctrl-C or SIGTERM (a whole process group signalled, then serve itself)
        # must not cut this short and leave a child running: every wait below is bounded.
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        for process in (web, worker):
            if process.poll() is None:
                process.terminate()
        # While the web server and the worker finish: a slow shutdown of theirs, cut short
        # by whoever stops serve, must not leave the model server running.
        if model is not None:
            model.stop()
        for process in (web, worker):
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
    return exit_code
