"""A notebook on a phone: a bar of tabs (Sources · Chat · Studio · Notes) shows one part at a
time instead of one column thousands of pixels long; a cited passage opens in the chat; the
skip link to the question opens the chat; without JavaScript the tabs are links down the one
column. A desktop has no bar and all parts side by side."""

from __future__ import annotations

from django.contrib.auth import get_user_model

from notebooks.models import Notebook

from .conftest import SCREENSHOTS
from .helpers import DROP

PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
NOTES = "Avocets sweep their upturned bills through the shallow water for shrimp. " * 8
PARTS = ("sources", "chat", "studio", "notes")


def shown(page) -> list[str]:
    return [part for part in PARTS if page.locator(f"#panel-{part}").is_visible()]


def test_a_phone_shows_one_part_at_a_time_under_a_bar_of_tabs(page_for, live):
    page = page_for("nina", **PHONE)
    owner = get_user_model().objects.get(username="nina")
    notebook = Notebook.objects.create(owner=owner, title="Lagoon")
    page.goto(f"/notebooks/{notebook.pk}/")
    bar = page.locator(".workspace-tabs")
    assert bar.is_visible()
    assert shown(page) == ["sources"]  # nothing to ask about yet: the sources first
    page.screenshot(path=SCREENSHOTS / "phone-tabs-sources-390.png")

    page.evaluate(DROP, ["avocets.txt", NOTES])
    page.wait_for_selector(".source .badge-ready", timeout=90_000)
    bar.get_by_role("link", name="Chat").click()
    assert shown(page) == ["chat"]
    assert bar.locator("[aria-current=true]").inner_text() == "Chat"
    height = page.evaluate("document.documentElement.scrollHeight")
    assert height < 1600, height

    live.models.chat_replies.append("Avocets sweep their bills through the water [1].")
    page.fill("#question", "How do avocets feed?")
    page.locator("#question").press("Enter")
    page.locator("#chat .citations a").first.click()
    page.wait_for_selector("#passage .passage mark", timeout=30_000)
    assert page.locator("#passage").is_visible()
    page.screenshot(path=SCREENSHOTS / "phone-tabs-chat-390.png")

    bar.get_by_role("link", name="Studio").click()
    assert "studio" in shown(page) and "chat" not in shown(page)
    # The chat's passage does not stand above the studio: choosing a part closed it.
    assert page.locator("#passage").inner_html().strip() == ""
    assert page.locator("#studio-kind").bounding_box()["y"] < 400
    assert page.locator("#studio-kind").is_visible()
    page.screenshot(path=SCREENSHOTS / "phone-tabs-studio-390.png")
    bar.get_by_role("link", name="Notes").click()
    assert "notes" in shown(page) and "studio" not in shown(page)
    page.screenshot(path=SCREENSHOTS / "phone-tabs-notes-390.png")

    # The skip link to the question opens the chat; an address naming a part opens that one.
    page.locator(".skip-link[href='#question']").focus()
    page.keyboard.press("Enter")
    assert "chat" in shown(page)
    assert page.evaluate("document.activeElement.id") == "question"
    page.goto(f"/notebooks/{notebook.pk}/#panel-notes")
    assert shown(page) == ["notes"]

    # A desktop: no bar, every part.
    desk = page_for("nina", viewport={"width": 1440, "height": 900})
    desk.goto(f"/notebooks/{notebook.pk}/")
    assert not desk.locator(".workspace-tabs").is_visible()
    assert shown(desk) == list(PARTS)
    desk.screenshot(path=SCREENSHOTS / "phone-tabs-desktop-1440.png")


def test_without_javascript_the_tabs_are_links_down_the_one_column(page_for, live):
    page = page_for("nina", java_script_enabled=False, **PHONE)
    owner = get_user_model().objects.get(username="nina")
    notebook = Notebook.objects.create(owner=owner, title="Saltmarsh")
    page.goto(f"/notebooks/{notebook.pk}/")
    assert shown(page) == list(PARTS)
    page.locator(".workspace-tabs").get_by_role("link", name="Notes").click()
    assert page.url.endswith("#panel-notes")
    assert page.evaluate("window.scrollY") > 500
    notes = page.locator("#panel-notes").bounding_box()
    assert notes["y"] >= 0 and notes["y"] + notes["height"] <= 844, notes
    page.screenshot(path=SCREENSHOTS / "phone-tabs-no-javascript-390.png")
