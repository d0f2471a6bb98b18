"""The local model server as `serve` runs it: the smallest packaged model (SmolLM2-135M,
installed by make test) in llama.cpp's server, a child process that answers the chat
provider, is started again when killed, and runs once per data folder."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from providers import local_model, local_model_supervisor
from providers.chat import chat
from providers.local_model import (
    PACKAGED_MODELS,
    Plan,
    local_chat_plan,
    read_status_at,
    too_small,
)
from providers.local_model_supervisor import LocalModelServer, free_port

SMALLEST = PACKAGED_MODELS[-1]
pytestmark = pytest.mark.timeout(600)


@pytest.fixture
def smallest_plan():
    if not SMALLEST.installed():
        pytest.fail(f"{SMALLEST.name} is not installed: make install-dev installs it")
    return Plan(SMALLEST.path(), SMALLEST.chat_model, SMALLEST.description, 2, 2048, "")


@pytest.fixture
def model_server(smallest_plan, tmp_path, settings):
    server = LocalModelServer(smallest_plan, data_dir=tmp_path)
    server.start()
    try:
        assert server.wait_ready(120), server.state
        for name, value in server.environment().items():
            setattr(settings, name, int(value) if value.isdigit() else value)
        yield server
    finally:
        server.stop()


@pytest.mark.django_db
def test_the_chat_provider_answers_with_the_local_model(model_server, settings):
    reply = chat([{"role": "user", "content": "Say hello."}], user=None, max_tokens=16, timeout=60)

    assert reply.text.strip()
    assert reply.model == SMALLEST.chat_model
    assert model_server.base_url == settings.CHAT_BASE_URL


@pytest.mark.django_db
def test_a_question_is_answered_while_a_long_reply_is_being_written(model_server):
    """Two slots: a short answer does not wait for a long studio reply to end."""

    finished: list[str] = []

    def long_reply() -> None:
        # Straight to the server, not through providers.chat: this thread's database
        # connection is outside the test's transaction, so a usage row it wrote would stay.
        from openai import OpenAI

        OpenAI(base_url=model_server.base_url, api_key="none", timeout=300).chat.completions.create(
            model=model_server.plan.chat_model,
            messages=[{"role": "user", "content": "Count from one to five hundred in words."}],
            max_tokens=1500,
            # Long whatever the model: a 135M model may stop counting after a few words.
            extra_body={"ignore_eos": True},
        )
        finished.append("long")

    writer = threading.Thread(target=long_reply)
    writer.start()
    try:
        reply = chat([{"role": "user", "content": "Say hi."}], user=None, max_tokens=4, timeout=120)
        finished.append("short")
        assert reply.text.strip()
    finally:
        writer.join()
    assert finished == ["short", "long"]


@pytest.mark.django_db
def test_a_killed_server_is_started_again(model_server):
    assert model_server.process is not None
    first = model_server.process.pid
    os.kill(first, signal.SIGKILL)
    model_server.process.wait()

    assert model_server.wait_ready(120)

    assert model_server.process.pid != first
    assert model_server.restarts == 1
    reply = chat([{"role": "user", "content": "Hi"}], user=None, max_tokens=8, timeout=60)
    assert reply.text.strip()


def test_a_second_loupe_on_the_same_data_folder_uses_the_running_server(model_server, tmp_path):
    second = LocalModelServer(model_server.plan, data_dir=tmp_path)
    second.start()

    assert second.shared
    assert second.port == model_server.port
    second.stop()  # stops nothing of the first's
    assert model_server.process is not None and model_server.process.poll() is None


@pytest.mark.django_db
def test_a_command_run_beside_serve_answers_with_its_local_model(model_server, tmp_path, settings):
    """`generate` or `ask` in another terminal: no chat model configured, the one serve runs
    for this data folder is used, with the settings serve gives its worker."""
    settings.DATA_DIR = tmp_path
    settings.CHAT_BASE_URL = settings.CHAT_MODEL = settings.OPENAI_BASE_URL = ""
    settings.GENERATION_PASSAGES = 16

    assert local_model.join_running_server()

    assert model_server.base_url == settings.CHAT_BASE_URL
    assert SMALLEST.chat_model == settings.CHAT_MODEL
    assert settings.GENERATION_PASSAGES == 8
    reply = chat([{"role": "user", "content": "Say hello."}], user=None, max_tokens=8, timeout=60)
    assert reply.model == SMALLEST.chat_model


def test_a_command_joins_no_server_that_is_not_running(model_server, tmp_path, settings):
    settings.CHAT_BASE_URL = settings.CHAT_MODEL = settings.OPENAI_BASE_URL = ""
    settings.DATA_DIR = tmp_path / "elsewhere"  # no server runs for this data folder

    assert not local_model.join_running_server()
    assert settings.CHAT_BASE_URL == ""

    settings.DATA_DIR = tmp_path
    stop(model_server.process.pid)  # its status says ready; it answers not
    try:
        assert not local_model.join_running_server()
    finally:
        os.kill(model_server.process.pid, signal.SIGCONT)


def stop(pid: int) -> None:
    """SIGSTOP, and wait until every thread of the process has stopped: the signal wakes
    one thread, which then stops the others, so llama.cpp's HTTP thread can still answer a
    request sent in between (it did, in CI)."""
    os.kill(pid, signal.SIGSTOP)
    deadline = time.monotonic() + 30
    while not all(thread_stopped(task) for task in Path(f"/proc/{pid}/task").iterdir()):
        assert time.monotonic() < deadline, f"process {pid} did not stop"
        time.sleep(0.01)


def thread_stopped(task: Path) -> bool:
    # /proc/PID/task/TID/stat: "TID (name) STATE ..."; the name may hold spaces.
    return (task / "stat").read_text().rpartition(")")[2].split()[0] == "T"


def test_its_state_is_written_to_the_data_folder_and_removed_at_the_end(smallest_plan, tmp_path):
    server = LocalModelServer(smallest_plan, data_dir=tmp_path)
    server.start()
    try:
        assert server.wait_ready(120)
        status = read_status_at(tmp_path / "local-model" / "status.json")
        assert status["state"] == "ready"
        assert status["url"] == server.base_url
    finally:
        server.stop()
    assert not (tmp_path / "local-model" / "status.json").exists()
    assert server.process is not None and server.process.poll() is not None


def test_a_machine_too_small_gets_a_sentence_saying_why():
    assert "1 CPU core" in too_small(10**9, cores=1, available=16 * 10**9)
    assert "GB of memory free" in too_small(10**9, cores=4, available=2 * 10**9)
    assert too_small(10**9, cores=2, available=8 * 10**9) == ""


def test_local_chat_model_off_keeps_the_model_free_mode(settings):
    settings.OPENAI_BASE_URL = settings.CHAT_MODEL = settings.CHAT_BASE_URL = ""
    settings.LOCAL_CHAT_MODEL = "off"

    plan = local_chat_plan()

    assert plan.path is None
    assert "LOCAL_CHAT_MODEL=off" in plan.reason


def test_a_configured_chat_model_needs_no_local_one(settings):
    settings.OPENAI_BASE_URL = "http://127.0.0.1:9/v1"
    settings.CHAT_MODEL = "someone-elses"

    assert local_chat_plan().path is None


def test_a_small_machine_runs_without_a_model(settings, monkeypatch):
    settings.OPENAI_BASE_URL = settings.CHAT_MODEL = settings.CHAT_BASE_URL = ""
    settings.LOCAL_CHAT_MODEL = "auto"
    monkeypatch.setattr(local_model, "machine_memory", lambda: (10**9, 5 * 10**8))

    plan = local_chat_plan()

    assert plan.path is None
    assert "memory" in plan.reason


@pytest.fixture
def other_program():
    """A program that answers /health on a port of its own, as llama.cpp does."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Healthy(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b'{"status": "ok"}')

        def log_message(self, *args: object) -> None:
            pass

    other = ThreadingHTTPServer(("127.0.0.1", 0), Healthy)
    threading.Thread(target=other.serve_forever, daemon=True).start()
    try:
        yield other.server_address[1]
    finally:
        other.shutdown()
        other.server_close()


def test_another_program_on_the_port_is_not_taken_for_the_model(
    smallest_plan, tmp_path, other_program, monkeypatch
):
    """The port is chosen free, then bound by the child a moment later: a program that took
    it meanwhile answers /health too, and must not be mistaken for the model. The model
    moves to another port."""
    ports = iter([other_program, free_port()])
    monkeypatch.setattr(local_model_supervisor, "free_port", lambda: next(ports))
    server = LocalModelServer(smallest_plan, data_dir=tmp_path)
    server.start()
    states = []
    try:
        deadline = time.monotonic() + 120
        while server.state != "ready" and time.monotonic() < deadline:
            server.check()
            states.append((server.state, server.port))
            time.sleep(0.2)

        assert server.state == "ready"
        assert server.port != other_program
        assert ("ready", other_program) not in states
        assert ("restarting", server.port) in states
        assert server.restarts == 1
        assert chat_reply(server)
    finally:
        server.stop()


def test_a_port_given_to_it_and_taken_is_said_to_be_taken(smallest_plan, tmp_path, other_program):
    server = LocalModelServer(smallest_plan, data_dir=tmp_path, port=other_program)
    server.start()
    try:
        assert not server.wait_ready(10)
        status = read_status_at(tmp_path / "local-model" / "status.json")
        assert status["state"] == "restarting"
        assert status["problem"] == f"port {other_program} is taken by another program"
    finally:
        server.stop()


def chat_reply(server: LocalModelServer) -> str:
    from openai import OpenAI

    client = OpenAI(base_url=server.base_url, api_key="none", timeout=60)
    reply = client.chat.completions.create(
        model=server.plan.chat_model,
        messages=[{"role": "user", "content": "Say hi."}],
        max_tokens=4,
    )
    return reply.choices[0].message.content or ""
