"""Production settings (LOUPE_PRODUCTION, set by the Docker image) refuse to start without a
SECRET_KEY and pass Django's deployment checks; a laptop needs no configuration."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ops.tests.stack import (
    REPO,
    TEST_SECRET_KEY,
    production_env,
)

# Settings load without a database connection; this address is never dialled.
NO_DATABASE = "postgresql://loupe@127.0.0.1:9/loupe"


def manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("key", ["", "too-short"])
def test_production_refuses_to_start_without_a_real_secret_key(tmp_path, key):
    env = production_env(tmp_path, DATABASE_URL=NO_DATABASE, SECRET_KEY=key)

    result = manage("check", env=env)

    assert result.returncode != 0
    assert "ImproperlyConfigured: SECRET_KEY is not set or shorter than 32 characters" in (
        result.stderr
    )
    assert not (tmp_path / "secret_key").exists()


def test_production_passes_the_deployment_checks_that_matter(tmp_path):
    env = production_env(
        tmp_path,
        DATABASE_URL=NO_DATABASE,
        CSRF_TRUSTED_ORIGINS="https://loupe.example.org",
        TRUST_X_FORWARDED_PROTO="true",
    )

    result = manage("check", "--deploy", env=env)

    assert result.returncode == 0, result.stderr
    output = result.stdout + result.stderr
    # HSTS, secure session and CSRF cookies, the key, DEBUG, ALLOWED_HOSTS.
    for check in ("W004", "W009", "W012", "W016", "W018", "W020"):
        assert f"security.{check}" not in output, output


def test_a_laptop_starts_with_no_configuration_and_keeps_its_generated_key(tmp_path):
    env = {
        "PATH": production_env(tmp_path)["PATH"],
        "HOME": str(tmp_path),
        "LOUPE_DATA_DIR": str(tmp_path),
        "DATABASE_URL": NO_DATABASE,
    }
    code = "from django.conf import settings; print(settings.DEBUG, settings.SECRET_KEY)"

    first = manage("shell", "-c", code, env=env)
    second = manage("shell", "-c", code, env=env)

    assert first.returncode == 0, first.stderr
    debug, key = first.stdout.split()[-2:]  # after the shell's own line
    assert debug == "False"
    assert len(key) >= 50 and key != TEST_SECRET_KEY
    assert second.stdout == first.stdout  # the same key after a restart
    assert (tmp_path / "secret_key").stat().st_mode & 0o777 == 0o600


def test_an_hnsw_ef_search_pgvector_would_refuse_stops_the_start(tmp_path):
    # Above 1000 pgvector refuses hnsw.ef_search, and every large notebook's search would
    # fail with it: the setting is refused when Loupe starts instead.
    env = production_env(
        tmp_path,
        DATABASE_URL=NO_DATABASE,
        SECRET_KEY=TEST_SECRET_KEY,
        RETRIEVAL_HNSW_EF_SEARCH="1200",
    )

    result = manage("check", env=env)

    assert result.returncode != 0
    assert "RETRIEVAL_HNSW_EF_SEARCH must be at most 1000" in result.stderr
