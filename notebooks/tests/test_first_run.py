"""The first run: `make run` ends with a box saying where Loupe is, how to sign in, where the
password is kept, how to get an admin and whether audio works; the login page of a local
install points at the same file, a production site never does."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from ops.first_run import first_run_box
from ops.tests.stack import REPO, database_url, fake_models, free_port, stop


@pytest.fixture
def data_dir(settings, tmp_path):
    settings.DATA_DIR = tmp_path / "data"
    return settings.DATA_DIR


def demo_password() -> str:
    out = StringIO()
    call_command("demo_user", stdout=out)
    return out.getvalue().split("password: ")[1].split()[0]


@pytest.mark.django_db
def test_the_box_gives_the_address_the_demo_login_its_file_the_admin_command_and_audio(
    data_dir, settings
):
    settings.ESPEAK_BINARY = "espeak-ng-that-is-not-installed"
    password = demo_password()

    box = first_run_box("127.0.0.1", 8613)

    assert "http://127.0.0.1:8613/" in box
    assert f"Sign in as:  demo   password: {password}" in box
    assert str(data_dir / "demo-login.txt") in box  # outside the checkout: the full path
    assert "make admin" in box
    assert "Audio overviews: off: Loupe has no speech engine" in box
    assert "apt-get install espeak-ng" in box
    lines = box.splitlines()
    assert len({len(line) for line in lines}) == 1, box  # a closed frame
    # 80 columns, or as wide as a path that cannot be cut.
    assert len(lines[0]) <= max(80, len(str(data_dir / "demo-login.txt")) + 6), box
    user = get_user_model().objects.get(username="demo")
    assert user.check_password(password)
    assert not user.is_staff and not user.is_superuser  # an admin is made on purpose


@pytest.mark.django_db
def test_the_demo_password_stays_the_same_from_one_run_to_the_next(data_dir):
    first = demo_password()

    assert demo_password() == first
    assert (data_dir / "demo-login.txt").read_text().strip() == first
    assert (data_dir / "demo-login.txt").stat().st_mode & 0o077 == 0


@pytest.mark.django_db
def test_the_login_page_of_a_local_install_says_where_the_demo_login_is(client, data_dir):
    demo_password()

    page = client.get("/login/").content.decode()

    assert 'data-testid="demo-login-hint"' in page
    assert "<strong>demo</strong>" in page
    assert str(data_dir / "demo-login.txt") in page
    assert demo_password() not in page


@pytest.mark.django_db
def test_the_login_page_in_production_never_mentions_a_demo_login(client, data_dir, settings):
    demo_password()
    settings.PRODUCTION = True

    page = client.get("/login/").content.decode()

    assert "demo-login" not in page and "<strong>demo</strong>" not in page


@pytest.mark.django_db
def test_the_login_page_without_a_demo_user_gives_no_hint(client, data_dir):
    assert "demo-login-hint" not in client.get("/login/").content.decode()


@pytest.mark.django_db(transaction=True)
def test_serve_prints_the_box_once_the_server_answers(fake_openai, tmp_path):
    data = tmp_path / "data"
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", "/tmp"),
        "LOUPE_DATA_DIR": str(data),
        "DATABASE_URL": database_url(),
        **fake_models(fake_openai),
    }
    python = [sys.executable, "manage.py"]
    made = subprocess.run(
        [*python, "demo_user"], cwd=REPO, env=env, capture_output=True, text=True, timeout=60
    )
    assert made.returncode == 0, made.stderr
    password = (data / "demo-login.txt").read_text().strip()
    port = free_port()
    serve = subprocess.Popen(
        [*python, "serve", "--host", "127.0.0.1", "--port", str(port)],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        assert serve.stdout is not None
        os.set_blocking(serve.stdout.fileno(), False)
        output = b""
        deadline = time.monotonic() + 120
        while b"\xe2\x94\x98" not in output:  # the box's last corner
            assert time.monotonic() < deadline, output.decode()
            assert serve.poll() is None, output.decode()
            output += serve.stdout.read() or b""
            time.sleep(0.2)
    finally:
        if serve.poll() is None:
            os.killpg(serve.pid, signal.SIGTERM)
        stop(serve)

    box = output.decode()
    assert f"Loupe is running at http://127.0.0.1:{port}/" in box
    assert f"password: {password}" in box
