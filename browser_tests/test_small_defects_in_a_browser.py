"""Small things on the notebook page, at 1440 and 390 px: the PDF reading mode reads in full,
the conversation's title field is folded under "Rename" (an open one looked like a second
question box), and saving the chat style stays in the conversation that was open."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from notebooks.models import Conversation, Message, Notebook

from .conftest import SCREENSHOTS

# The width the select's chosen text needs, measured in the select's own font.
TEXT_FITS = """(select) => {
  const text = select.options[select.selectedIndex].text;
  const context = document.createElement("canvas").getContext("2d");
  context.font = getComputedStyle(select).font;
  return {need: context.measureText(text).width, have: select.clientWidth};
}"""


@pytest.mark.parametrize("width", [1440, 390])
def test_the_small_things_on_the_notebook_page(page_for, live, width):
    page = page_for("tess", viewport={"width": width, "height": 900})
    owner = get_user_model().objects.get(username="tess")
    notebook = Notebook.objects.create(owner=owner, title="Reeds")
    older = Conversation.objects.create(notebook=notebook, user=owner)
    Message.objects.create(conversation=older, role="user", content="Where do reeds grow?")
    newer = Conversation.objects.create(notebook=notebook, user=owner)
    Message.objects.create(conversation=newer, role="user", content="How tall are reeds?")
    page.goto(f"/notebooks/{notebook.pk}/conversations/{older.pk}/#panel-sources")

    select = page.locator("#upload-capture")
    select.select_option("auto")  # the longest choice
    fits = select.evaluate(TEXT_FITS)
    assert fits["need"] + 24 <= fits["have"], fits  # room for the arrow too

    page.goto(f"/notebooks/{notebook.pk}/conversations/{older.pk}/#panel-chat")
    title = page.locator("#conversation-title")
    assert not title.is_visible()
    page.locator(".rename-conversation summary").click()
    title.fill("Reed beds")
    page.locator(".rename-form button").click()
    assert page.locator(".conversation-list [aria-current=page]").inner_text() == "Reed beds"
    page.screenshot(path=SCREENSHOTS / f"small-defects-{width}.png")

    page.locator(".chat-style summary").click()
    page.locator(".chat-style-form input[value=learning]").check()
    page.locator(".chat-style-form button[type=submit]").click()
    page.wait_for_load_state()
    assert f"/conversations/{older.pk}/" in page.url
    assert "The chat style was saved." in page.locator("ul.flash").inner_text()
