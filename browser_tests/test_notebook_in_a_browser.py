"""A new user's path through Loupe in Chromium: sign in, create a notebook, upload a PDF and
watch it become ready, ask and watch the answer stream in, open the cited page with its
highlight, stop an answer; then the same notebook on a phone, light and dark."""

from __future__ import annotations

import itertools
import re

from notebooks.models import Message, Notebook

from .conftest import SCREENSHOTS, WATCH_UPLOADS
from .helpers import FOUR_PAGES, create_notebook

QUESTION = "What does a blind text give you information about?"
REPLY = (
    "A blind text gives you information about the selected font and how the letters "
    "are written [1]. It should contain all letters of the alphabet [1]."
)
LONG_REPLY = " ".join(["This answer goes on and on while the reader waits."] * 12) + " [1]"

# Records every text the streaming answer shows, so the test can tell it grew in pieces.
WATCH_STREAM = """() => {
  window.streamTexts = [];
  new MutationObserver(() => {
    const streaming = document.querySelector("#chat .message-streaming .message-text");
    const text = streaming ? streaming.textContent : null;
    if (text && window.streamTexts[window.streamTexts.length - 1] !== text) {
      window.streamTexts.push(text);
    }
  }).observe(document.getElementById("chat"),
             {subtree: true, childList: true, characterData: true});
}"""


def upload_and_wait(page, path) -> None:
    page.evaluate(WATCH_UPLOADS)
    page.set_input_files("#upload-files", str(path))
    page.wait_for_selector(".source .badge-ready", timeout=90_000)
    assert page.evaluate("window.uploadBars") >= 1


def ask(page, question: str) -> None:
    page.fill("#question", question)
    page.click(".ask-form button[type=submit]")


def test_a_new_user_uploads_a_pdf_asks_and_opens_the_cited_page(page_for, live):
    page = page_for("alice")
    assert page.locator("h1").inner_text() == "Your notebooks"
    assert "No notebooks yet" in page.locator("main").inner_text()

    notebook_id = create_notebook(page, "Typography")
    assert page.locator("h1").inner_text() == "Typography"
    assert "No sources yet" in page.locator("#sources").inner_text()

    upload_and_wait(page, FOUR_PAGES)
    source = page.locator(".source").first
    assert "pdflatex-4-pages" in source.locator(".source-title").inner_text()
    assert "4 pages" in source.inner_text()
    assert "Ask about this" in source.inner_text()

    # The answer streams: the model server sends a word every 0.2 s, and the page shows
    # the text growing before the stored, rendered message replaces it.
    live.models.chat_replies.append(REPLY)
    live.models.stream_delay = 0.2
    page.evaluate(WATCH_STREAM)
    ask(page, QUESTION)
    page.wait_for_selector("#chat .message-assistant a.cite", timeout=60_000)
    pieces = page.evaluate("window.streamTexts")
    assert len(pieces) >= 3, pieces
    assert all(later.startswith(earlier) for earlier, later in itertools.pairwise(pieces))
    assert len(pieces[0]) < len(REPLY)
    answer = page.locator("#chat .message-assistant").last
    assert "selected font" in answer.inner_text()
    assert page.locator("#chat .message-streaming").count() == 0
    assert re.search(rf"/notebooks/{notebook_id}/conversations/\d+/$", page.url)

    # [1] opens the passage beside the chat: the quote marked, the page image highlighted.
    assert not page.locator("#passage").is_visible()
    answer.locator("a.cite").first.click()
    passage = page.locator("#passage .passage")
    passage.wait_for()
    assert passage.locator("h2").inner_text().startswith("[1] pdflatex-4-pages")
    assert passage.locator("mark").inner_text().strip()
    image = passage.locator(".page-view img")
    assert "citation=" in image.get_attribute("src")
    assert "highlighted" in image.get_attribute("alt")
    page.wait_for_function(
        "() => { const i = document.querySelector('#passage .page-view img');"
        " return i && i.complete && i.naturalWidth > 0; }"
    )
    highlighted = page.request.get(image.get_attribute("src"))
    plain = page.request.get(image.get_attribute("src").split("?")[0])
    assert highlighted.ok and plain.ok
    assert highlighted.headers["content-type"] == "image/png"
    assert highlighted.body() != plain.body()  # the highlight is drawn on the page
    assert page.evaluate("document.activeElement.id") == "passage"  # for the keyboard
    page.keyboard.press("Escape")
    assert not page.locator("#passage").is_visible()
    assert page.evaluate("document.activeElement.classList.contains('cite')")

    # Stop ends a long answer: nothing is stored, the question returns to the box.
    live.models.chat_replies.append(LONG_REPLY)
    live.models.stream_delay = 0.3
    ask(page, "Tell me everything, slowly.")
    page.wait_for_function(
        "() => { const t = document.querySelector('#chat .message-streaming .message-text');"
        " return t && t.textContent.length > 0; }"
    )
    # A second question sent with Enter meanwhile is not asked: one answer at a time.
    chats = len(live.models.chat_requests)
    page.fill("#question", "And another thing?")
    page.press("#question", "Enter")
    page.wait_for_timeout(500)
    assert page.locator("#chat .message-user").count() == 2
    assert len(live.models.chat_requests) == chats
    assert page.input_value("#question") == "And another thing?"
    page.fill("#question", "")
    page.click(".stop-button")
    page.wait_for_selector("text=Stopped. This answer was not saved.")
    assert page.input_value("#question") == "Tell me everything, slowly."
    # The server hung up on the model too: it sends no more of its 120 words.
    page.wait_for_timeout(1500)
    sent = live.models.chunks_sent
    page.wait_for_timeout(1500)
    assert live.models.chunks_sent == sent
    assert not Message.objects.filter(content__startswith="This answer goes on").exists()
    assert page.console.unexpected() == []

    # The same notebook on a phone, in the light and the dark theme, the passage open:
    # the screenshots in the README.
    url = f"/notebooks/{notebook_id}/"
    for scheme in ("light", "dark"):
        phone = page_for(
            "alice",
            viewport={"width": 390, "height": 844},
            device_scale_factor=2,
            is_mobile=True,
            has_touch=True,
            color_scheme=scheme,
        )
        phone.goto(url)
        phone.locator("#chat .message-assistant a.cite").first.click()
        phone.wait_for_function(
            "() => { const i = document.querySelector('#passage .page-view img');"
            " return i && i.complete && i.naturalWidth > 0; }"
        )
        background = phone.evaluate("getComputedStyle(document.body).backgroundColor")
        assert (background == "rgb(13, 17, 23)") == (scheme == "dark"), background
        # Nothing wider than the phone's screen.
        assert phone.evaluate("document.documentElement.scrollWidth") <= 390
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        phone.screenshot(path=str(SCREENSHOTS / f"notebook-phone-{scheme}.png"), full_page=True)

    # And on a desktop screen: sources | chat | studio, the passage beside the chat.
    desktop = page_for("alice", viewport={"width": 1440, "height": 1000})
    desktop.goto(url)
    desktop.locator("#chat .message-assistant a.cite").first.click()
    desktop.wait_for_function(
        "() => { const i = document.querySelector('#passage .page-view img');"
        " return i && i.complete && i.naturalWidth > 0; }"
    )
    columns = [
        desktop.locator(selector).bounding_box()["x"]
        for selector in (".sources-panel", ".chat-panel", "#passage", ".studio-panel")
    ]
    assert columns[0] < columns[1] < columns[2] == columns[3]
    desktop.screenshot(path=str(SCREENSHOTS / "notebook-desktop.png"))
    assert Notebook.objects.filter(pk=notebook_id, owner__username="alice").exists()
