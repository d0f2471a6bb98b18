"""The chat's keys as in every other chat: Enter sends, Shift+Enter makes a new line; a skip
link reaches the question box at once, and the [n] of earlier answers do not stand in the
keyboard's way (the list under each answer links the same passages)."""

from __future__ import annotations

from .conftest import SCREENSHOTS
from .helpers import DROP, create_notebook

NOTES = "Kingfishers dive from a perch into shallow water to catch small fish. " * 10
REPLY = "Kingfishers dive from a perch [1]. They catch small fish [1]. In shallow water [1]."


def test_enter_sends_shift_enter_breaks_the_line_and_a_skip_link_reaches_the_box(page_for, live):
    page = page_for("kira", viewport={"width": 1440, "height": 900})
    create_notebook(page, "River birds")
    page.evaluate(DROP, ["kingfishers.txt", NOTES])
    page.wait_for_selector(".source .badge-ready", timeout=90_000)

    question = page.locator("#question")
    for n in range(2):
        live.models.chat_replies.append(REPLY)
        question.fill("")
        question.type("How do kingfishers")
        page.keyboard.press("Shift+Enter")
        question.type("catch fish?")
        assert question.input_value() == "How do kingfishers\ncatch fish?"
        assert page.locator("#chat .message-assistant").count() == n
        page.keyboard.press("Enter")
        page.wait_for_function(
            "n => document.querySelectorAll('#chat .message-assistant a.cite').length >= n",
            arg=3 * (n + 1),
            timeout=60_000,
        )
        assert question.input_value() == ""
    asked = page.locator("#chat .message-user .message-text").first.inner_text()
    assert asked == "How do kingfishers\ncatch fish?"

    # From the top of the page: the second Tab stop is the skip link to the question box.
    page.reload()
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    focused = page.evaluate("() => document.activeElement.textContent.trim()")
    assert focused == "Skip to the question"
    page.screenshot(path=SCREENSHOTS / "chat-skip-link-1440.png")
    page.keyboard.press("Enter")
    assert page.evaluate("() => document.activeElement.id") == "question"

    # The [n] inside the answers are out of the tab order; the list under each answer is in it.
    inline = page.locator("#chat .message-text a.cite")
    listed = page.locator("#chat .citations a")
    assert inline.count() >= 6 and listed.count() >= 2
    assert all(
        tabindex == "-1"
        for tabindex in inline.evaluate_all("a => a.map(x => x.getAttribute('tabindex'))")
    )
    assert listed.evaluate_all("a => a.every(x => x.tabIndex === 0)")

    # On a phone too: Enter sends.
    phone = page_for("kira", viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    phone.goto(page.url)
    live.models.chat_replies.append(REPLY)
    phone.locator("#question").fill("Where do they fish?")
    phone.locator("#question").press("Enter")
    phone.wait_for_function(
        "() => document.querySelectorAll('#chat .message-assistant').length >= 3", timeout=60_000
    )
    phone.locator("#question").scroll_into_view_if_needed()
    phone.screenshot(path=SCREENSHOTS / "chat-keys-390.png")
