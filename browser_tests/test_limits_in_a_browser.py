"""A person past an abuse limit sees why where they acted: in the web-page form, beside the
dropped file, and in the chat. The counts are set in the database (as a day of use would),
since the live server runs with the default limits."""

from __future__ import annotations

import time

from django.conf import settings
from django.contrib.auth import get_user_model

from limits.models import RateCounter
from notebooks.models import Notebook

from .conftest import WATCH_UPLOADS
from .helpers import DROP


def spend(key: str, rate) -> None:
    """Use up `rate` for `key` in this window and the next (a test may cross a boundary)."""
    window = int(time.time() // rate.seconds)
    for number in (window, window + 1):
        RateCounter.objects.create(key=key, window=number, count=rate.requests)


def test_a_refusal_shows_where_the_action_happened(page_for, live):
    page = page_for("rita")
    rita = get_user_model().objects.get(username="rita")
    notebook = Notebook.objects.create(owner=rita, title="Limits")
    spend(f"upload:user:{rita.pk}", settings.RATE_LIMIT_UPLOAD)
    spend(f"ask:user:{rita.pk}", settings.RATE_LIMIT_ASK)
    for action in ("add-url", "upload", "ask/stream"):
        page.console.expect(429, f"/notebooks/{notebook.pk}/{action}/")
    page.goto(f"/notebooks/{notebook.pk}/")

    page.fill("#add-url", "https://example.org/page")
    page.click(".url-form button[type=submit]")
    notice = page.locator(".url-form .limit-refused")
    notice.wait_for()
    assert "RATE_LIMIT_UPLOAD" in notice.inner_text()
    assert "Try again in" in notice.inner_text()

    page.evaluate(WATCH_UPLOADS)
    page.evaluate(DROP, ["notes.txt", "Grey herons wait."])
    failed = page.locator("#upload-progress .upload-failed")
    failed.wait_for()
    assert "RATE_LIMIT_UPLOAD" in failed.inner_text()

    page.fill("#question", "Where do herons wait?")
    page.click(".ask-form button[type=submit]")
    page.wait_for_selector("text=RATE_LIMIT_ASK")
    assert "limit for asking questions" in page.locator("#main").inner_text()
    assert page.console.unexpected() == []
    page.screenshot(path=str(live.data_dir / "limits.png"), full_page=True)
