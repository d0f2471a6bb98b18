"""Loupe served for real for the API's clients: uvicorn (as `manage.py serve` runs it) on a
free 127.0.0.1 port, on the test database, with the fake model server behind it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ops.tests.stack import free_port

ROOT = Path(__file__).resolve().parents[2]

# The settings the fake_openai fixture gives the test process, for the server's too.
MODEL_ENV = {
    "OPENAI_API_KEY": "test",
    "CHAT_MODEL": "fake-chat",
    "EMBEDDING_MODEL": "fake-embed",
    "EMBEDDING_DIMENSIONS": "64",
    "SOURCE_SUMMARIES": "extractive",
    "SIMILARITY_FLOOR": "0",
    "OPENAI_MAX_RETRIES": "1",
    "OPENAI_TIMEOUT_SECONDS": "20",
    "MODEL_PRICES": json.dumps(
        {
            "fake-chat": {"input_per_million": "2", "output_per_million": "8"},
            "fake-embed": {"input_per_million": "0.1"},
            "fake-vision": {"input_per_million": "2", "output_per_million": "8"},
            "fake-stt": {"per_second": "0.001"},
            "fake-tts": {"per_second": "0.002"},
        }
    ),
}


def server_env(*, database: str, models_url: str, data_dir: Path) -> dict[str, str]:
    return {
        **os.environ,
        **MODEL_ENV,
        "LOUPE_DATA_DIR": str(data_dir),
        "DATABASE_URL": database,
        "DEBUG": "false",
        "OPENAI_BASE_URL": models_url,
        "PYTHONUNBUFFERED": "1",
    }


@contextmanager
def serving(env: dict[str, str], log: Path) -> Iterator[str]:
    """uvicorn with config.asgi (the /mcp mount too) until the block ends; its base URL."""
    port = free_port()
    command = [sys.executable, "-m", "uvicorn", "config.asgi:application"]
    command += ["--host", "127.0.0.1", "--port", str(port)]
    with open(log, "wb") as out:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"uvicorn exited:\n{log.read_text()[-4000:]}")
            try:
                with urllib.request.urlopen(url + "/login/", timeout=5):
                    break
            except (urllib.error.URLError, OSError):
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"uvicorn did not answer:\n{log.read_text()[-4000:]}"
                    ) from None
                time.sleep(0.3)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
