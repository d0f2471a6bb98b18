"""Flashcards in the browser: generate them from a notebook's PDF, turn a card over to read
its answer, and open the answer's citation beside the cards."""

from __future__ import annotations

import json

from django.contrib.auth import get_user_model
from django.core.files import File

from ingest.services import add_source
from notebooks.models import Notebook

from .helpers import FOUR_PAGES

CARDS = {
    "title": "Blind text cards",
    "cards": [
        {
            "front": "Blind text",
            "back": "A blind text gives information about the selected font [1].",
        },
        {
            "front": "What should the text contain?",
            "back": "All letters of the alphabet [1].",
        },
    ],
}


def test_flashcards_turn_over_to_their_cited_answer(page_for, live):
    page = page_for("flora")
    owner = get_user_model().objects.get(username="flora")
    notebook = Notebook.objects.create(owner=owner, title="Typesetting")
    with FOUR_PAGES.open("rb") as handle:
        add_source(owner=owner, notebook=notebook, upload=File(handle, name=FOUR_PAGES.name))
    live.models.chat_replies.append(json.dumps(CARDS))
    page.goto(f"/notebooks/{notebook.pk}/")
    page.wait_for_selector(".source .badge-ready", timeout=90_000)

    page.select_option("#studio-kind", "flashcards")
    page.click(".studio-form button[type=submit]")
    document = page.locator(".studio-document.source-ready a.studio-title")
    document.wait_for(timeout=90_000)
    document.click()

    page.wait_for_selector("h1:has-text('Blind text cards')")
    card = page.locator(".flashcard").nth(0)
    assert not card.locator(".flashcard-back").is_visible()  # the answer is face down
    card.locator(".flashcard-front").click()
    back = card.locator(".flashcard-back")
    assert back.inner_text().startswith("A blind text gives information")
    back.locator("a", has_text="[1]").click()
    page.locator("#passage .passage").wait_for()
    assert page.locator("#passage h2").inner_text() == "[1] pdflatex-4-pages"
    assert page.console.unexpected() == []
