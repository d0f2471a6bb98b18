from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from config.database import restart_embedded_postgres_if_down
from config.env import env_str
from notebooks.first_run import first_run_box, wait_until_listening
from providers.local_model import LocalModelServer, LocalModelUnavailable, local_chat_plan

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
    pages and jobs, which retry a lost database, then recover by themselves."""

    def __init__(self) -> None:
        self.embedded = not env_str("DATABASE_URL")
        self.next_check = time.monotonic() + DATABASE_CHECK_SECONDS

    def check(self, now: float) -> None:
        if not self.embedded or now < self.next_check:
            return
        try:
            # It says so in the log when it had to (config/database.py).
            restart_embedded_postgres_if_down(settings.DATA_DIR, env_str("DATABASE_SHARED_BUFFERS"))
        except Exception:
            # Its log (pgdata/log) says why; it is tried again at the next check.
            logger.exception("the embedded PostgreSQL had stopped and did not start again")
        self.next_check = time.monotonic() + DATABASE_CHECK_SECONDS


class Command(BaseCommand):
    help = (
        "Start the web server (uvicorn, ASGI), a Procrastinate worker and, when no chat model "
        "is configured, the local model server together; Ctrl-C stops them all. A worker or "
        "model server that exits is started again (after a pause that grows while it keeps "
        "exiting), and so is the embedded PostgreSQL; if the web server exits, the others are "
        "stopped too. "
        "Django's debug pages only with DEBUG=true."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument(
            "--no-worker",
            action="store_true",
            help="web server only, in place of this process",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        python = sys.executable
        web_argv = web_command(host=options["host"], port=options["port"])
        if options["no_worker"]:
            # Become the server: a stop signal reaches uvicorn itself.
            os.execv(python, web_argv)
        worker_argv = [python, "manage.py", "worker"]
        model, model_line = self.start_local_model()
        # The web server and the worker answer with the local model through these settings.
        environment = os.environ | (model.environment() if model else {})
        web = subprocess.Popen(web_argv, env=environment)
        worker = subprocess.Popen(worker_argv, env=environment)
        worker_started = time.monotonic()
        # After the server's own start-up lines, so that the box is the last thing shown.
        if wait_until_listening(options["host"], options["port"], web):
            if model is not None and not model.wait_ready(settings.LOCAL_CHAT_START_SECONDS):
                logger.error("the local model server is not ready yet: %s", model.state)
            if model is not None:
                model_line = model.describe()
            self.stdout.write(first_run_box(options["host"], options["port"], chat=model_line))
            self.stdout.flush()  # a pipe (make run | tee) would hold it back

        def stop(*_: Any) -> None:
            raise KeyboardInterrupt

        signal.signal(signal.SIGTERM, stop)
        exit_code = 0
        pause = RESTART_PAUSE_SECONDS
        restart_at: float | None = None
        database = DatabaseWatch()
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
        sys.exit(exit_code)

    def start_local_model(self) -> tuple[LocalModelServer | None, str]:
        """The local model server, started, when Loupe should answer with it; else None and
        the sentence the first-run box says of the chat model."""
        if settings.CHAT_MODEL:
            return (
                None,
                f"{settings.CHAT_MODEL} at {settings.CHAT_BASE_URL or settings.OPENAI_BASE_URL}",
            )
        plan = local_chat_plan()
        if plan.path is None:
            line = f"none, answers quote the passages: {plan.reason}"
            if plan.reason != "off (LOCAL_CHAT_MODEL=off)":
                logger.warning("no local chat model: %s", plan.reason)
            return None, line
        model = LocalModelServer(plan)
        try:
            model.start()
        except LocalModelUnavailable as exc:
            logger.warning("no local chat model: %s", exc)
            return None, f"none, answers quote the passages: {exc}"
        return model, model.describe()
