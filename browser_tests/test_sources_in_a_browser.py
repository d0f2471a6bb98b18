"""Sources in the browser: a file dropped on the box is uploaded with a progress bar and
read; the library adds it to a second notebook; Remove takes it out of one notebook only."""

from __future__ import annotations

from django.contrib.auth import get_user_model

from notebooks.models import Notebook, NotebookSource

from .conftest import WATCH_UPLOADS
from .helpers import DROP

NOTES = "Grey herons stand still at the edge of the pond and wait for fish. " * 20


def test_a_dropped_file_is_uploaded_read_shared_and_removed(page_for, live):
    page = page_for("dora")
    owner = get_user_model().objects.get(username="dora")
    birds = Notebook.objects.create(owner=owner, title="Birds")
    ponds = Notebook.objects.create(owner=owner, title="Ponds")
    page.goto(f"/notebooks/{birds.pk}/")

    page.evaluate(WATCH_UPLOADS)
    page.evaluate(DROP, ["herons.txt", NOTES])

    page.wait_for_selector(".source .badge-ready", timeout=60_000)
    assert "herons" in page.locator(".source .source-title").inner_text()
    assert page.evaluate("window.uploadBars") == 1
    assert page.locator("#upload-progress li").count() == 0  # done: the bar is gone

    # The library lists it with its notebook, and adds it to the other one in place.
    page.click("nav.account >> text=Library")
    item = page.locator(".library-item", has_text="herons")
    assert "Birds" in item.locator(".library-notebooks").inner_text()
    item.locator("select").select_option(label="Ponds")
    item.locator("button", has_text="Add").click()
    page.wait_for_selector(".library-item .note.success")
    assert "is now in “Ponds”" in page.locator(".library-item").inner_text()
    assert NotebookSource.objects.filter(notebook=ponds, source__title="herons").exists()

    # Remove (after a confirmation) takes it out of Birds only; keyboard focus is visible.
    page.goto(f"/notebooks/{birds.pk}/")
    page.on("dialog", lambda dialog: dialog.accept())
    remove = page.locator(".source button", has_text="Remove")
    remove.focus()
    outline = remove.evaluate("button => getComputedStyle(button).outlineStyle")
    assert outline != "none"
    page.keyboard.press("Enter")
    page.wait_for_selector("#sources .empty")
    assert "was removed from this notebook" in page.locator("#upload-notes").inner_text()
    assert not NotebookSource.objects.filter(notebook=birds).exists()
    assert NotebookSource.objects.filter(notebook=ponds, source__title="herons").exists()
    assert page.console.unexpected() == []
