"""Two people in one notebook from their own accounts: the owner shares it in the share
dialog, the editor finds it under "Shared with me", asks, posts the conversation; a viewer
reads it but is offered no question box; revoking shuts the door on the next request."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.files import File

from ingest.services import add_source
from notebooks.models import Notebook

from .helpers import FOUR_PAGES


def test_two_people_work_in_one_notebook(page_for, live):
    owner_page = page_for("olga")
    editor_page = page_for("eddie")
    viewer_page = page_for("vera")
    owner = get_user_model().objects.get(username="olga")
    notebook = Notebook.objects.create(owner=owner, title="Joint typesetting notes")
    with FOUR_PAGES.open("rb") as handle:
        add_source(owner=owner, notebook=notebook, upload=File(handle, name=FOUR_PAGES.name))

    # The owner shares it in the dialog: eddie edits, vera views.
    owner_page.goto(f"/notebooks/{notebook.pk}/")
    owner_page.click(".share-link")
    dialog = owner_page.locator("#share-dialog")
    dialog.locator("#share-person").wait_for()
    assert dialog.is_visible()
    for person, role in (("eddie", "editor"), ("vera", "viewer")):
        dialog.locator("#share-person").fill(person)
        dialog.locator("#share-role").select_option(role)
        dialog.locator(".share-form button[type=submit]").click()
        dialog.locator(f".member:has-text('{person}')").wait_for()
    assert "olga shared it with eddie as editor" in dialog.inner_text()
    # caret="initial": hiding the caret, Playwright applies an inline style that the CSP
    # blocks and the page's error log records (it began with the sources' checkboxes).
    owner_page.screenshot(path="docs/screenshots/share-dialog.png", caret="initial")

    # The editor finds it, waits for the source, asks and posts the conversation.
    editor_page.goto("/notebooks/")
    editor_page.click(".shared-notebooks a:has-text('Joint typesetting notes')")
    editor_page.wait_for_selector(".source .badge-ready", timeout=90_000)
    assert "Shared with you by olga" in editor_page.inner_text(".notebook-sharing")
    live.models.chat_replies.append("A blind text shows the selected font [1].")
    editor_page.fill("#question", "What does a blind text show?")
    editor_page.click(".ask-form button[type=submit]")
    editor_page.locator("#chat .message-assistant a.cite").first.wait_for(timeout=60_000)
    editor_page.wait_for_selector("#conversations a[aria-current=page]")
    editor_page.click("button:has-text('Post to the notebook')")
    editor_page.wait_for_selector("button:has-text('Make private')")

    # The viewer reads the posted conversation and its citation, with nothing to ask in.
    viewer_page.goto(f"/notebooks/{notebook.pk}/")
    viewer_page.click("#conversations a:has-text('What does a blind text show?')")
    viewer_page.locator("#chat .message-assistant a.cite").first.click()
    viewer_page.wait_for_selector("#passage .passage mark", timeout=30_000)
    assert viewer_page.locator("#question").count() == 0
    assert viewer_page.locator(".upload-form").count() == 0
    assert "Only its owner and editors can ask" in viewer_page.content()

    # Revoked: the viewer's next request is a 404.
    owner_page.goto(f"/notebooks/{notebook.pk}/sharing/")
    owner_page.once("dialog", lambda prompt: prompt.accept())
    owner_page.click(".member:has-text('vera') button:has-text('Revoke')")
    owner_page.wait_for_selector("text=vera no longer has access")
    viewer_page.console.expect(404, f"/notebooks/{notebook.pk}/")
    assert viewer_page.goto(f"/notebooks/{notebook.pk}/").status == 404

    for page in (owner_page, editor_page, viewer_page):
        assert page.console.unexpected() == []
