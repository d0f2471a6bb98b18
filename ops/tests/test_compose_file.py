"""docker-compose.yml parses (`docker compose config`) and describes the production stack."""

from __future__ import annotations

import json
import re

from procrastinate.contrib.django import app

from config.settings import BASE_DIR
from ops.tests.stack import compose_config

SERVICES = {"db", "migrate", "web", "worker", "worker-generate"}


def queues_of(command: list[str]) -> set[str]:
    (option,) = [part for part in command if part.startswith("--queues=")]
    return set(option.removeprefix("--queues=").split(","))


def test_compose_config_parses_the_stack():
    config = compose_config()

    assert set(config["services"]) == SERVICES
    db = config["services"]["db"]
    # pgvector's image as published: nothing built, nothing preloaded.
    assert db["image"] == "pgvector/pgvector:pg18"
    assert "build" not in db
    assert "pg_isready" in " ".join(db["healthcheck"]["test"])
    assert {v["source"] for v in db["volumes"]} == {"pgdata"}
    assert db["command"] == [
        "postgres",
        "-c",
        "shared_buffers=1GB",
    ]
    assert set(config["volumes"]) == {"pgdata", "media"}
    for name in SERVICES - {"db"}:
        service = config["services"][name]
        assert service["image"] == "loupe:latest"
        assert service["environment"]["DATABASE_URL"] == (
            "postgresql://loupe:test-password@db:5432/loupe"
        )
        assert [v["source"] for v in service["volumes"]] == ["media"]
        assert service["depends_on"]["db"]["condition"] == "service_healthy"
    for name in ("web", "worker", "worker-generate"):
        depends = config["services"][name]["depends_on"]
        assert depends["migrate"]["condition"] == "service_completed_successfully"
    assert "/healthz" in " ".join(config["services"]["web"]["healthcheck"]["test"])


def test_every_queue_a_task_uses_has_a_worker_service():
    config = compose_config()
    served = queues_of(config["services"]["worker"]["command"]) | queues_of(
        config["services"]["worker-generate"]["command"]
    )
    used = {task.queue for task in app.tasks.values() if not task.name.startswith("builtin:")}

    assert "maintenance" in used and "ingest" in used
    assert used <= served, f"no worker listens to {used - served}"
    # Upkeep (stalled jobs, cleanup) must run whichever worker kind is scaled down.
    assert "maintenance" in queues_of(config["services"]["worker"]["command"])
    assert "maintenance" in queues_of(config["services"]["worker-generate"]["command"])


def test_per_queue_concurrency_comes_from_the_environment():
    services = compose_config(WORKER_INGEST_CONCURRENCY="4")["services"]
    assert "--concurrency=4" in services["worker"]["command"]
    # the generate worker keeps its default
    assert "--concurrency=1" in services["worker-generate"]["command"]


def test_the_bundled_databases_cache_size_comes_from_the_environment():
    db = compose_config(DATABASE_SHARED_BUFFERS="4GB")["services"]["db"]
    assert db["command"][:3] == ["postgres", "-c", "shared_buffers=4GB"]


def test_a_managed_database_url_replaces_the_bundled_one():
    url = "postgresql://loupe:secret@db.example.org:5432/loupe?sslmode=require"
    services = compose_config(DATABASE_URL=url)["services"]
    for name in SERVICES - {"db"}:
        assert services[name]["environment"]["DATABASE_URL"] == url


def test_env_example_lists_every_setting():
    settings_source = "\n".join(
        part.read_text() for part in (BASE_DIR / "config" / "settings").glob("*.py")
    )
    read = set(
        re.findall(r'env_(?:str|int|float|bool|list|decimal)\(\s*"([A-Z0-9_]+)"', settings_source)
    )
    example = (BASE_DIR / ".env.example").read_text()
    listed = set(re.findall(r"^#? ?([A-Z][A-Z0-9_]+)=", example, flags=re.MULTILINE))

    assert read, "no settings found: have config/settings/*.py changed their readers?"
    assert read <= listed, f".env.example does not describe {sorted(read - listed)}"


def test_the_image_runs_the_web_server_as_compose_does_and_not_as_root():
    dockerfile = (BASE_DIR / "Dockerfile").read_text()
    cmd = re.search(r"^CMD (\[.*?\])$", dockerfile, flags=re.MULTILINE | re.DOTALL)
    assert cmd, "Dockerfile has no CMD in exec form"
    command = json.loads(cmd.group(1).replace("\\\n", ""))
    config = compose_config()

    assert command == config["services"]["web"]["command"]
    assert re.search(r"^FROM python:3\.11-slim", dockerfile, flags=re.MULTILINE)
    assert re.search(r"^USER loupe$", dockerfile, flags=re.MULTILINE)
    assert "LOUPE_PRODUCTION=true" in dockerfile
    assert "pip install --require-hashes -r requirements.lock" in dockerfile
