"""Running the local model server for `serve`: `LocalModelServer` starts llama.cpp's server
(local_model_server.py) as a child process, one per data folder (a lock in it), starts it
again when it exits or stops answering /health, writes its state to the data folder for
/healthz and the commands (local_model.read_status), and stops it with Loupe. Which model,
and whether to run one at all, is local_model.py's `local_chat_plan()`."""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

from django.conf import settings

from providers.local_model import LocalModelUnavailable, Plan, healthy, read_status_at
from providers.local_model_server import PORT_TAKEN

logger = logging.getLogger(__name__)


def server_command(plan: Plan, port: int, listening_file: Path) -> list[str]:
    assert plan.path is not None
    return [
        sys.executable,
        "-m",
        "providers.local_model_server",
        "--model",
        str(plan.path),
        "--alias",
        plan.chat_model,
        "--port",
        str(port),
        "--context",
        str(plan.context),
        "--threads",
        str(plan.threads),
        "--listening-file",
        str(listening_file),
    ]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


# A server that exits is started again after this pause, doubled at each exit in a row.
RESTART_PAUSE_SECONDS = 1.0
RESTART_PAUSE_MAX_SECONDS = 60.0
# /health is asked this often once the server is up; this many failures in a row (a hung
# server) have it started again.
HEALTH_EVERY_SECONDS = 10.0
HEALTH_FAILURES = 3


class LocalModelServer:
    """Runs and watches the local model server for `serve`: call `start()`, then `check()`
    every second or so, and `stop()` at the end.

    One per data folder: a second Loupe on the same folder uses the server the first runs
    (`shared`) rather than loading the model twice.
    """

    def __init__(self, plan: Plan, *, data_dir: Path | None = None, port: int = 0) -> None:
        self.plan = plan
        self.folder = Path(data_dir or settings.DATA_DIR) / "local-model"
        self.port = port
        # A port given here is kept when taken; one Loupe chose is replaced by another.
        self._port_given = bool(port)
        self.process: subprocess.Popen[bytes] | None = None
        self.state = "stopped"
        self.restarts = 0
        self.shared = False
        self._lock: IO[str] | None = None
        self._log: IO[bytes] | None = None
        self._started = 0.0
        self._ready = False
        self._restart_at: float | None = None
        self._pause = RESTART_PAUSE_SECONDS
        self._next_health = 0.0
        self._health_failures = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def environment(self) -> dict[str, str]:
        """The settings the web server and the worker need to answer with it. Values a person
        set themselves (CHAT_ANSWER_TOKENS …) are kept."""
        chosen = {
            "CHAT_BASE_URL": self.base_url,
            "CHAT_MODEL": self.plan.chat_model,
            "CHAT_CONTEXT_TOKENS": str(self.plan.context),
        }
        defaults = {
            # A small model told to stop early answers shortly; its context stays prompt.
            "CHAT_ANSWER_TOKENS": "400",
            # The sentences that match the question, not eight whole 420-token windows: a
            # 2-core CPU reads ~70 prompt tokens a second before the first word.
            "CHAT_PASSAGE_TOKENS": "160",
            # Four passages, not eight (nor twelve about one source): asked manual-qa's 60
            # questions, each of a notebook of one manual, the 1.5B model cited the gold page
            # as often (47 against 45) with more of its sentences verified (74 % against
            # 64 %), from a prompt of ~780 tokens instead of ~1,350 (docs/retrieval.md).
            "RETRIEVAL_K": "4",
            "RETRIEVAL_K_ONE_SOURCE": "4",
            # A follow-up rewritten to stand alone finds its passages ("How long does that take?").
            "RETRIEVAL_QUERY_REWRITE": "on",
            # Ingest writes a model's summary and guide before a source's vectors: minutes of
            # a 2-core CPU per source, with its passages unsearchable by meaning meanwhile.
            "SOURCE_SUMMARIES": "extractive",
            # A studio document reads 8 passages, one call each (below): a report of the
            # 261-page Debian Reference took under a minute of a quiet 2-core CPU.
            "GENERATION_PASSAGES": "8",
            # Asked for a whole document in one call, a 1.5B model copies its passages or
            # invents; asked about one passage at a time, it writes what the passage says.
            "GENERATION_BY_PASSAGE": "1",
            # A studio reply of 2,000 tokens at ~5 a second, after a 4,000-token prompt read at
            # ~27 a second, takes ~10 minutes of a 2-core CPU in one call; the document as a
            # whole stays within GENERATION_TIMEOUT_SECONDS.
            "CHAT_TIMEOUT_SECONDS": "1500",
        }
        return chosen | {name: value for name, value in defaults.items() if name not in os.environ}

    def start(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        lock = (self.folder / "lock").open("w")
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            lock.close()
            other = read_status_at(self.folder / "status.json")
            if other.get("port"):
                self.shared, self.port, self.state = True, int(other["port"]), "shared"
                logger.info("the local model server of this data folder runs already: %s", other)
                return
            raise LocalModelUnavailable(
                "another Loupe holds this data folder's local model and says nothing of it"
            ) from None
        self._lock = lock
        self.port = self.port or free_port()
        self._log = (self.folder / "server.log").open("ab")
        self._spawn()

    @property
    def _listening_file(self) -> Path:
        return self.folder / "listening"

    def _listening(self) -> bool:
        """Whether the child says it listens on the port: until then, whatever answers there
        is another program (which took the port between free_port() and the child's bind)."""
        assert self.process is not None
        try:
            return self._listening_file.read_text() == str(self.process.pid)
        except OSError:
            return False

    def _spawn(self) -> None:
        assert self._log is not None
        with contextlib.suppress(OSError):
            self._listening_file.unlink()
        self.process = subprocess.Popen(
            server_command(self.plan, self.port, self._listening_file),
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        self._started = time.monotonic()
        self._ready = False
        self._health_failures = 0
        self._next_health = self._started
        self._set_state("starting")
        logger.info(
            "local model server starting: %s on %s (pid %s, %d threads, context %d)",
            self.plan.description,
            self.base_url,
            self.process.pid,
            self.plan.threads,
            self.plan.context,
        )

    def _set_state(self, state: str, problem: str = "") -> None:
        self.state = state
        status = {
            "state": state,
            "model": self.plan.chat_model,
            "description": self.plan.description,
            "url": self.base_url,
            "port": self.port,
            "pid": self.process.pid if self.process else None,
            "restarts": self.restarts,
            "problem": problem,
            # What a command run beside serve applies to answer with it (join_running_server).
            "environment": self.environment(),
        }
        path = self.folder / "status.json"
        temporary = path.with_suffix(".new")
        temporary.write_text(json.dumps(status))
        temporary.replace(path)

    def wait_ready(self, seconds: float) -> bool:
        """Until the model answers /health (True) or `seconds` pass (False)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.check()
            if self.state in {"ready", "shared"}:
                return True
            time.sleep(0.5)
        return False

    def check(self) -> None:
        """Notice an exit, a load that takes too long or a server that stopped answering, and
        start it again (after a pause that grows while it keeps failing)."""
        if self.shared or self.process is None:
            return
        now = time.monotonic()
        if self._restart_at is not None:
            if now >= self._restart_at:
                self._restart_at = None
                self.restarts += 1
                self._spawn()
            return
        if self.process.poll() is not None:
            if self.process.returncode == PORT_TAKEN and self._port_given:
                self._failed(f"port {self.port} is taken by another program", now)
            elif self.process.returncode == PORT_TAKEN:
                taken, self.port = self.port, free_port()
                self._failed(
                    f"port {taken} was taken by another program; moving to {self.port}", now
                )
            else:
                self._failed(f"the model server exited ({self.process.returncode})", now)
            return
        if now < self._next_health:
            return
        if self._listening() and healthy(self.base_url):
            if not self._ready:
                logger.info("local model server ready after %.0f s", now - self._started)
                self._pause = RESTART_PAUSE_SECONDS
            self._ready = True
            self._health_failures = 0
            if self.state != "ready":
                self._set_state("ready")
            self._next_health = now + HEALTH_EVERY_SECONDS
            return
        if not self._ready:
            if now - self._started > settings.LOCAL_CHAT_START_SECONDS:
                self._failed(
                    f"the model server did not load in {settings.LOCAL_CHAT_START_SECONDS:g} s "
                    "(LOCAL_CHAT_START_SECONDS)",
                    now,
                )
            else:
                self._next_health = now + 0.5
            return
        self._health_failures += 1
        self._next_health = now + 1.0
        if self._health_failures >= HEALTH_FAILURES:
            self._failed("the model server stopped answering /health", now)

    def _failed(self, problem: str, now: float) -> None:
        assert self.process is not None
        self._terminate(self.process)
        logger.error("%s; starting it again in %.0f s", problem, self._pause)
        self._restart_at = now + self._pause
        self._pause = min(self._pause * 2, RESTART_PAUSE_MAX_SECONDS)
        self._set_state("restarting", problem)

    @staticmethod
    def _terminate(process: subprocess.Popen[bytes]) -> None:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def stop(self) -> None:
        if self.shared:
            return
        if self.process is not None:
            self._terminate(self.process)
        with contextlib.suppress(OSError):
            (self.folder / "status.json").unlink()
        with contextlib.suppress(OSError):
            self._listening_file.unlink()
        if self._log is not None:
            self._log.close()
        if self._lock is not None:
            self._lock.close()  # releases the flock
        self.state = "stopped"

    def describe(self) -> str:
        """One line for the first-run box."""
        states = {
            "ready": "on",
            "shared": "on (the server another Loupe runs for this data folder)",
            "starting": "loading",
            "restarting": "restarting",
        }
        return (
            f"{states.get(self.state, self.state)}: {self.plan.description}, local "
            f"({self.plan.threads} threads, context {self.plan.context})"
        )
