"""A question asked while the database is away gets the outage's sentence in the chat, not
"could not answer (HTTP 503)"; a database lost in the middle of an answer ends its stream
with an error event saying so and one log line, not a cut stream and a traceback."""

from __future__ import annotations

import json
import logging

import psycopg
import pytest
from asgiref.sync import async_to_sync
from django.db import IntegrityError, OperationalError
from django.test import Client
from django.urls import reverse

from notebooks.views.chat import _answer_events
from ops.outage import outage_message
from ops.tests.outage import embedded_only, start_database, stop_database


def events_of(notebook, answers) -> list[tuple[str, dict]]:
    async def read() -> list[str]:
        return [event async for event in _answer_events(notebook, answers)]

    parsed = []
    for event in async_to_sync(read)():
        name, data = event.strip().split("\n")
        parsed.append((name.removeprefix("event: "), json.loads(data.removeprefix("data: "))))
    return parsed


@pytest.mark.django_db
def test_a_database_lost_mid_answer_ends_the_stream_with_an_error_event(notebook, caplog):
    closed = []

    def answer():
        try:
            yield "Grey herons"
            raise OperationalError("the connection is lost") from psycopg.OperationalError()
        finally:
            closed.append(True)

    with caplog.at_level(logging.WARNING):
        events = events_of(notebook, answer())

    assert events == [("delta", {"text": "Grey herons"}), ("error", {"error": outage_message()})]
    assert closed == [True]
    [line] = [record for record in caplog.records if record.levelno >= logging.WARNING]
    assert "lost the database" in line.getMessage()
    assert line.exc_info is None


@pytest.mark.django_db
def test_other_errors_are_still_bugs(notebook):
    def answer():
        yield "Grey herons"
        raise IntegrityError("a bug, not an outage")

    with pytest.raises(IntegrityError):
        events_of(notebook, answer())


@embedded_only
@pytest.mark.django_db(transaction=True)
def test_a_question_during_an_outage_is_answered_with_the_outage_sentence(owner, notebook):
    client = Client(raise_request_exception=False)
    client.force_login(owner)
    url = reverse("notebooks:ask_stream", args=[notebook.pk])

    stop_database()
    try:
        response = client.post(url, {"question": "Where do herons wait?"}, HTTP_HX_REQUEST="true")
    finally:
        start_database()

    assert response.status_code == 503
    assert response.text == f'<p class="note error" role="alert">{outage_message()}</p>'
    assert response["Retry-After"] == "5"
