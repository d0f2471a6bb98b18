"""Ctrl-C on `make run` stops `manage.py serve` without an error: the web server may stop
(exit 0) before serve notices the signal itself, and that is a stop, not a failure."""

from __future__ import annotations

import os
import signal
import time

import pytest

from ops.tests.test_serve_restarts_its_worker import children, start_serve

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_web_server_that_stopped_ends_serve_without_an_error(tmp_path):
    serve, _port, log = start_serve(tmp_path)
    try:
        web = [pid for pid, cmd in children(serve.pid).items() if "uvicorn" in cmd]
        assert web, children(serve.pid)
        # As Ctrl-C reaches uvicorn first: it stops and exits 0.
        os.kill(web[0], signal.SIGINT)
        deadline = time.monotonic() + 30
        while serve.poll() is None:
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
    finally:
        if serve.poll() is None:
            serve.send_signal(signal.SIGTERM)
            serve.wait(timeout=30)
    output = log.read_text()
    assert serve.returncode == 0, output
    assert "ERROR" not in output and "exited" not in output, output
