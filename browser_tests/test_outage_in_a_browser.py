"""A question asked while the database is away shows the outage's sentence in the chat,
not "Loupe could not answer (HTTP 503)"."""

from __future__ import annotations

from django.contrib.auth import get_user_model

from notebooks.models import Notebook
from ops.outage import outage_message
from ops.tests.outage import embedded_only, start_database, stop_database


@embedded_only
def test_a_question_during_an_outage_says_the_database_is_away(page_for, live):
    page = page_for("otto")
    otto = get_user_model().objects.get(username="otto")
    notebook = Notebook.objects.create(owner=otto, title="Outage")
    page.console.expect(503, f"/notebooks/{notebook.pk}/ask/stream/")
    page.goto(f"/notebooks/{notebook.pk}/")

    stop_database()
    try:
        page.fill("#question", "Where do herons wait?")
        page.click(".ask-form button[type=submit]")
        error = page.locator("#chat .message-error")
        error.wait_for(timeout=30_000)
        shown = error.inner_text()
    finally:
        start_database()
        live.restart_worker()  # for the tests after this one

    assert shown == outage_message()
    assert "HTTP 503" not in shown
    assert page.console.unexpected() == []
