"""Every command's `--json` output is for scripts: run as a user runs it (a process of its own,
logging as configured, the job queue drained in it), each prints only JSON lines on stdout;
logs and progress go to stderr."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from generation.tests.studio.conftest import reply
from ops.tests.stack import REPO, database_url, fake_models

pytestmark = pytest.mark.django_db(transaction=True)


def run_json(command: list[str], env: dict[str, str]) -> tuple[list[object], str]:
    """Run `manage.py COMMAND --json`; every stdout line must parse as JSON."""
    result = subprocess.run(
        [sys.executable, "manage.py", *command, "--json"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines, f"{command[0]} printed nothing on stdout; stderr: {result.stderr}"
    parsed = []
    for line in lines:
        try:
            parsed.append(json.loads(line))
        except json.JSONDecodeError:
            pytest.fail(f"{command[0]} --json printed a line that is not JSON: {line!r}")
    return parsed, result.stderr


def test_every_json_command_prints_only_json_lines_and_logs_to_stderr(fake_openai, tmp_path):
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", "/tmp"),
        "LOUPE_DATA_DIR": str(tmp_path / "data"),
        "DATABASE_URL": database_url(),
        "LOG_LEVEL": "INFO",
        **fake_models(fake_openai),  # with the job queue's logs at INFO
    }
    notes = tmp_path / "herons.txt"
    notes.write_text("Grey herons wait at the edge of the pond for fish. " * 40)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "moss.txt").write_text("Moss grows on the north side of old trees.")
    items = tmp_path / "items.jsonl"
    items.write_text(
        json.dumps({"doc_id": "moss", "question": "Where does moss grow?", "answers": ["north"]})
    )
    fake_openai.chat_replies.append("Herons wait at the edge of the pond [1].")
    fake_openai.chat_replies.append(reply({"title": "Herons", "markdown": "Herons wait [1]."}))

    [source], ingest_log = run_json(
        ["ingest", str(notes), "--user", "alice", "--notebook", "Birds"], env
    )
    [answer], _ = run_json(
        ["ask", "--user", "alice", "--notebook", "Birds", "Where do herons wait?"], env
    )
    [document], _ = run_json(
        ["generate", "--user", "alice", "--notebook", "Birds", "--kind", "report"], env
    )
    [figures], _ = run_json(["evaluate", "--qa", str(items), "--docs", str(docs)], env)
    [usage], _ = run_json(["usage_report", "--user", "alice"], env)
    [notebook], _ = run_json(["notes", "--user", "alice", "--notebook", "Birds"], env)
    subprocess.run(
        [sys.executable, "manage.py", "token", "create", "--user", "alice", "--name", "script"],
        cwd=REPO,
        env=env,
        check=True,
        capture_output=True,
    )
    [token], _ = run_json(["token", "list", "--user", "alice"], env)
    [memories], _ = run_json(["memory", "list", "--user", "alice", "--notebook", "Birds"], env)
    [questions], _ = run_json(
        ["question_log", "report", "--user", "alice", "--notebook", "Birds"], env
    )

    assert isinstance(source, dict) and source["status"] == "ready", source
    assert isinstance(answer, dict) and answer["citations"], answer
    assert isinstance(document, dict) and document["status"] == "ready", document
    assert isinstance(figures, dict) and figures["questions"] == 1
    assert isinstance(usage, dict) and usage["calls"] > 0
    assert isinstance(notebook, dict) and notebook["sources"], notebook
    assert isinstance(token, dict) and token["name"] == "script" and token["scope"] == "read"
    assert memories == []
    assert isinstance(questions, dict) and questions["asked"] == 1, questions
    # The logs that used to sit among the JSON lines went to stderr.
    assert "INFO" in ingest_log, ingest_log


def test_the_test_runs_every_command_that_has_a_json_option():
    commands = {
        path.stem
        for path in Path(REPO).glob("*/management/commands/*.py")
        if '"--json"' in path.read_text()
    }
    tested = Path(__file__).read_text()
    assert commands, "no command with --json found"
    for command in commands:
        assert f'["{command}"' in tested, f"{command} --json is not run by this test"
