"""Production logs: one JSON object per line, with what was passed as `extra` and any
traceback, on stderr (stdout is for what commands print)."""

from __future__ import annotations

import io
import json
import logging

from django.conf import settings

from ops.jsonlog import JsonFormatter


def log_line(emit) -> dict:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger("loupe.test.jsonlog")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        emit(logger)
    finally:
        logger.removeHandler(handler)
    (line,) = stream.getvalue().splitlines()
    return json.loads(line)


def test_a_line_holds_time_level_logger_message_and_extra_fields():
    entry = log_line(
        lambda logger: logger.warning(
            "source %s failed: %s", 7, "bad PDF", extra={"job": {"id": 3}, "action": "x"}
        )
    )

    assert entry["level"] == "WARNING"
    assert entry["logger"] == "loupe.test.jsonlog"
    assert entry["message"] == "source 7 failed: bad PDF"
    assert entry["job"] == {"id": 3} and entry["action"] == "x"
    assert entry["time"].endswith("+00:00")
    assert "args" not in entry and "msg" not in entry


def test_a_traceback_stays_inside_its_line():
    def emit(logger):
        try:
            raise ValueError("broken\nacross lines")
        except ValueError:
            logger.exception("it failed")

    entry = log_line(emit)

    assert entry["level"] == "ERROR"
    assert "ValueError: broken\nacross lines" in entry["exception"]


def test_values_json_cannot_hold_are_written_as_text():
    entry = log_line(lambda logger: logger.info("odd", extra={"where": object()}))

    assert entry["where"].startswith("<object object")


def test_the_console_handler_writes_stderr():
    handler: dict = settings.LOGGING["handlers"]["console"]  # type: ignore[index]
    assert handler["stream"] == "ext://sys.stderr"
    assert handler["formatter"] in {"json", "text"}
