"""Memory commands and the question analytics in Chromium: /remember answered in the chat
without a model, the "Remembered" panel updated beside it and edited in place, a bad
command refused with the text back in the box; then a question asked, and its figures and
server-drawn charts on the notebook's analytics page, with no console error anywhere."""

from __future__ import annotations

from memory.models import Memory

from .helpers import DROP, create_notebook


def ask(page, text: str) -> None:
    page.fill("#question", text)
    page.click(".ask-form button[type=submit]")


def test_memory_commands_the_panel_and_the_analytics_page(page_for, live):
    page = page_for("mina")
    notebook_id = create_notebook(page, "Herons")
    chats_before = len(live.models.chat_requests)

    ask(page, "/remember I teach year 9 biology.")
    page.wait_for_selector("#chat .message-command")
    assert "Remembered for this notebook" in page.locator("#chat .message-command").inner_text()
    # The panel beside the chat shows the new fact (sent out of band with the reply).
    assert "Remembered: 1 fact" in page.locator("#memories summary").inner_text()
    assert len(live.models.chat_requests) == chats_before  # no model call

    # Edited in place: made to apply in every notebook.
    page.click("#memories summary")
    page.fill("#memories .memory-list input[name=text]", "I teach year 10 biology.")
    page.check("#memories .memory-list input[name=everywhere]")
    with page.expect_response(lambda response: response.request.method == "POST"):
        page.click("#memories .memory-list button[type=submit]")
    page.wait_for_function(
        "document.querySelector('#memories .memory-list input[name=text]')"
        ".value === 'I teach year 10 biology.'"
    )
    fact = Memory.objects.get()
    assert (fact.text, fact.notebook_id) == ("I teach year 10 biology.", None)

    # A command naming nothing: refused, the text back in the question box.
    ask(page, "/forget")
    page.wait_for_selector("#chat .message-error")
    assert "Name the fact to forget" in page.locator("#chat .message-error").inner_text()
    assert page.input_value("#question") == "/forget"

    # A real question, then its figures.
    page.evaluate(DROP, ["herons.txt", "Grey herons wait motionless at the edge of the pond."])
    page.wait_for_selector(".source .badge-ready", timeout=90_000)
    live.models.chat_replies.append("Herons wait at the edge of the pond [1].")
    ask(page, "Where do herons wait?")
    page.wait_for_selector("#chat .message-assistant a.cite", timeout=60_000)
    assert (
        "With 1 remembered fact of yours"
        in page.locator("#chat .message-assistant").last.inner_text()
    )

    page.click("text=Questions asked")
    page.wait_for_url(f"**/notebooks/{notebook_id}/analytics/")
    main = page.locator("main").inner_text()
    assert "Questions per day" in main and "Where do herons wait?" not in main  # answered
    assert page.locator("svg.chart").count() == 2
    assert page.locator("svg.chart rect.chart-bar").count() == 60  # 30 days, two charts
