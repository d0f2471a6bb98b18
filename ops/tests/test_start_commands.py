"""The containers' commands, from docker-compose.yml, run the stack against the test database:
migrate, the web server answering /healthz, a worker that processes a job and stops cleanly
on SIGTERM, all logging JSON lines as production does."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest
from django.core.files.base import ContentFile
from django.db import connection

from ingest.services import add_source
from library.models import Source
from ops.serving import web_command
from ops.tests.stack import (
    REPO,
    compose_config,
    container_command,
    fake_models,
    free_port,
    get,
    production_env,
    stop,
    wait_for_server,
)


def json_lines(path: Path) -> list[dict]:
    """Every line the process logged (to stderr), each of which must be one JSON object."""
    lines = [line for line in path.read_text().splitlines() if line.strip()]
    assert lines, f"{path.name} is empty"
    entries = [json.loads(line) for line in lines]
    for entry in entries:
        assert {"time", "level", "logger", "message"} <= set(entry), entry
    return entries


def wait_until(predicate, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def healthz(port: int) -> tuple[int, dict]:
    # Without a database the probe waits for the connection pool's timeout (10 s).
    status, body = get(f"http://127.0.0.1:{port}/healthz", timeout=30)
    return status, json.loads(body)


@pytest.mark.django_db(transaction=True)
def test_migrate_web_and_worker_commands_run_the_stack(
    fake_openai, owner, notebook, settings, tmp_path
):
    config = compose_config()
    with connection.cursor() as cursor:
        # Workers an earlier test killed would look alive for up to a minute.
        cursor.execute("DELETE FROM procrastinate_workers")
    data = tmp_path / "data"
    settings.MEDIA_ROOT = data / "uploads"  # where the containers' LOUPE_DATA_DIR keeps files
    env = production_env(data, **fake_models(fake_openai))

    migrate = subprocess.run(
        container_command(config, "migrate"),
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert migrate.returncode == 0, migrate.stdout + migrate.stderr
    assert "No migrations to apply" in migrate.stdout

    port = free_port()
    web_log, worker_log = tmp_path / "web.log", tmp_path / "worker.log"
    web_command = container_command(config, "web", host="127.0.0.1", port=str(port))
    with web_log.open("wb") as out:
        web = subprocess.Popen(web_command, cwd=REPO, env=env, stderr=out)
    worker = None
    try:
        wait_for_server(f"http://127.0.0.1:{port}/", web)

        # No worker yet: unhealthy, and it says why. Asked by IP, although ALLOWED_HOSTS
        # names only the public host, whose pages refuse other Host headers.
        status, report = healthz(port)
        assert status == 503
        assert report["checks"]["database"] == "ok"
        assert report["checks"]["migrations"] == "ok"
        assert "no worker" in report["checks"]["worker"]
        assert report["problems"] and report["problems"][0].startswith("worker:")
        assert get(f"http://127.0.0.1:{port}/login/")[0] == 400

        with worker_log.open("wb") as out:
            worker = subprocess.Popen(
                container_command(config, "worker"), cwd=REPO, env=env, stderr=out
            )
        wait_until(lambda: healthz(port)[0] == 200, 60, "/healthz to see the worker")
        status, report = healthz(port)
        assert report["status"] == "ok" and report["problems"] == []

        # The embedding answers slowly, so SIGTERM arrives while the job runs: the worker
        # takes no new job but finishes this one, then exits cleanly.
        fake_openai.slow_seconds = 3
        fake_openai.fail_next("slow", endpoint="embeddings")
        added = add_source(
            owner=owner,
            notebook=notebook,
            upload=ContentFile(b"Loupe runs in containers. " * 50, name="ops.txt"),
        )
        wait_until(lambda: fake_openai.embedding_requests, 60, "the worker to start embedding")
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(timeout=60) == 0

        source = Source.objects.get(pk=added.source.pk)
        assert source.status == Source.Status.READY, source.error
        assert source.chunks.count() == source.chunk_count > 0

        status, report = healthz(port)
        assert status == 503  # the stopped worker unregistered itself
        assert "no worker" in report["checks"]["worker"]
    finally:
        if worker is not None:
            stop(worker)
        stop(web)
    # uvicorn shuts down gracefully, then re-raises the SIGTERM it caught.
    assert web.returncode in (0, -signal.SIGTERM)

    worker_entries = json_lines(worker_log)
    events = [
        (entry.get("action"), entry["message"])
        for entry in worker_entries
        if entry.get("action") in {"stopping_worker", "job_success"}
    ]
    # The stop was asked for first, the ingest job still ended well.
    stop_requested = events.index(("stopping_worker", "Stop requested"))
    assert any(
        action == "job_success" and "ingest_source" in message
        for action, message in events[stop_requested:]
    ), events
    web_entries = json_lines(web_log)
    assert any("/healthz" in entry["message"] for entry in web_entries)


def test_healthz_names_an_unreachable_database(tmp_path):
    config = compose_config()
    closed = free_port()  # nothing listens there
    env = production_env(tmp_path, DATABASE_URL=f"postgresql://loupe:pw@127.0.0.1:{closed}/loupe")
    port = free_port()
    command = container_command(config, "web", host="127.0.0.1", port=str(port))
    web = subprocess.Popen(
        command, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        wait_for_server(f"http://127.0.0.1:{port}/", web)
        status, report = healthz(port)
    finally:
        stop(web)

    assert status == 503
    assert report["checks"]["database"].startswith("unreachable")
    assert report["checks"]["worker"] == "not checked: no database"
    assert report["problems"][0].startswith("database:")


def test_the_web_container_runs_the_server_as_manage_py_serve_does():
    config = compose_config()

    assert container_command(config, "web") == web_command(host="0.0.0.0", port=8000)
