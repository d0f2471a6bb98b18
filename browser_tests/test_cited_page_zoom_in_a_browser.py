"""The cited page readable: a click on the page picture in the passage opens it large in a
dialog (the same picture, its highlight drawn in), which scrolls and pinches on a phone;
Escape closes the dialog and leaves the passage open. Without JavaScript the picture is a
link to itself."""

from __future__ import annotations

from .conftest import SCREENSHOTS
from .helpers import FOUR_PAGES, create_notebook

REPLY = "A blind text gives you information about the selected font [1]."
IMAGE_LOADED = """(selector) => { const i = document.querySelector(selector);
  return i && i.complete && i.naturalWidth > 0; }"""


def open_cited_page(page) -> None:
    page.locator("#chat .citations a").first.click()
    page.wait_for_function(IMAGE_LOADED, arg="#passage .page-view img")


def test_the_cited_page_opens_large_with_its_highlight(page_for, live):
    page = page_for("zoe", viewport={"width": 1440, "height": 900})
    create_notebook(page, "Type")
    page.set_input_files("#upload-files", str(FOUR_PAGES))
    page.wait_for_selector(".source .badge-ready", timeout=90_000)
    live.models.chat_replies.append(REPLY)
    page.fill("#question", "What does a blind text give you information about?")
    page.locator("#question").press("Enter")
    page.wait_for_selector("#chat .citations a", timeout=60_000)
    open_cited_page(page)

    small = page.locator("#passage .page-view img")
    link = page.locator("#passage a.page-zoom")
    assert "citation=" in link.get_attribute("href")  # the highlighted picture, also without JS
    assert link.get_attribute("href") == small.get_attribute("src")
    small.click()
    dialog = page.locator("#page-dialog")
    assert dialog.evaluate("d => d.open")
    page.wait_for_function(IMAGE_LOADED, arg="#page-dialog img")
    large = dialog.locator("img")
    assert large.get_attribute("src").endswith(small.get_attribute("src"))
    assert large.bounding_box()["width"] > 2.5 * small.bounding_box()["width"]
    page.screenshot(path=SCREENSHOTS / "cited-page-large-1440.png")
    page.keyboard.press("Escape")
    assert not dialog.evaluate("d => d.open")
    assert page.locator("#passage .passage").is_visible()  # Escape closed the dialog only

    phone = page_for("zoe", viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    phone.goto(page.url)
    open_cited_page(phone)
    phone.locator("#passage .page-view img").click()
    phone.wait_for_function(IMAGE_LOADED, arg="#page-dialog img")
    frame = phone.locator("#page-dialog .page-dialog-frame")
    # Wider than the phone: read by moving and pinching, the page itself does not widen.
    assert frame.evaluate("f => f.scrollWidth > f.clientWidth")
    assert phone.evaluate("document.documentElement.scrollWidth") <= 390
    frame.evaluate("f => { f.scrollLeft = 120; f.scrollTop = 200; }")
    phone.screenshot(path=SCREENSHOTS / "cited-page-large-390.png")
    phone.locator("#page-dialog button", has_text="Close").click()
    assert not phone.locator("#page-dialog").evaluate("d => d.open")


def test_a_page_still_being_drawn_says_so_in_the_dialog_then_shows(page_for, live):
    """On a busy server the page takes seconds to draw: the dialog says it is being drawn
    (in the reader's language) instead of standing open as an empty strip."""
    page = page_for("zeno", viewport={"width": 1440, "height": 900})
    create_notebook(page, "Schrift")
    page.set_input_files("#upload-files", str(FOUR_PAGES))
    page.wait_for_selector(".source .badge-ready", timeout=90_000)
    page.set_extra_http_headers({"Accept-Language": "de"})
    page.reload()
    live.models.chat_replies.append(REPLY)
    page.fill("#question", "What does a blind text give you information about?")
    page.locator("#question").press("Enter")
    page.wait_for_selector("#chat .citations a", timeout=60_000)
    open_cited_page(page)
    # The large picture's request is held, as a slow server would (routing skips the cache).
    held = []
    page.route("**/pages/*.png*", lambda route: held.append(route))

    page.locator("#passage .page-view img").click()

    dialog = page.locator("#page-dialog")
    assert dialog.evaluate("d => d.open")
    status = dialog.locator(".page-dialog-status")
    assert status.is_visible() and status.inner_text() == "Die Seite wird gezeichnet …"
    assert dialog.bounding_box()["height"] > 100
    page.wait_for_function("() => document.querySelector('#page-dialog img').src !== ''")
    page.wait_for_timeout(300)
    page.screenshot(path=SCREENSHOTS / "cited-page-drawing-1440.png")
    assert len(held) == 1
    held[0].continue_()
    page.wait_for_function(IMAGE_LOADED, arg="#page-dialog img")
    assert not status.is_visible()
    assert dialog.locator("img").is_visible()

    # A page the server cannot draw says so, and the dialog still closes.
    page.keyboard.press("Escape")
    page.unroute("**/pages/*.png*")
    page.route("**/pages/*.png*", lambda route: route.fulfill(status=500, body="no"))
    large = page.locator("#passage a.page-zoom").get_attribute("href")
    page.console.expect(500, large.split("?")[0])
    page.locator("#passage .page-view img").click()
    page.wait_for_function(
        "() => document.querySelector('.page-dialog-status').textContent.startsWith('Die Seite')"
        " && document.querySelector('.page-dialog-status').textContent.includes('nicht')"
    )
    page.keyboard.press("Escape")
    assert not dialog.evaluate("d => d.open")
