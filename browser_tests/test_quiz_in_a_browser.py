"""The studio in the browser: generate a quiz from a notebook's PDF, open it and answer its
questions; the server checks each answer and explains it with a citation."""

from __future__ import annotations

import json

from django.contrib.auth import get_user_model
from django.core.files import File

from ingest.services import add_source
from notebooks.models import Notebook

from .helpers import FOUR_PAGES

QUIZ = {
    "title": "Blind text quiz",
    "questions": [
        {
            "type": "multiple_choice",
            "question": "What does a blind text give you information about?",
            "options": ["The weather tomorrow", "The selected font", "The price of paper"],
            "answer_index": 1,
            "explanation": "A blind text gives information about the selected font [1].",
        },
        {
            "type": "short_answer",
            "question": "What should the text contain?",
            "answer": "all letters of the alphabet",
            "explanation": "The text should contain all letters of the alphabet [1].",
        },
    ],
}


def test_a_quiz_is_generated_and_answered(page_for, live):
    page = page_for("quinn")
    owner = get_user_model().objects.get(username="quinn")
    notebook = Notebook.objects.create(owner=owner, title="Typesetting")
    with FOUR_PAGES.open("rb") as handle:
        add_source(owner=owner, notebook=notebook, upload=File(handle, name=FOUR_PAGES.name))
    live.models.chat_replies.append(json.dumps(QUIZ))
    page.goto(f"/notebooks/{notebook.pk}/")
    page.wait_for_selector(".source .badge-ready", timeout=90_000)

    page.select_option("#studio-kind", "quiz")
    page.click(".studio-form button[type=submit]")
    document = page.locator(".studio-document.source-ready a.studio-title")
    document.wait_for(timeout=90_000)
    assert document.inner_text() == "Blind text quiz"
    document.click()

    page.wait_for_selector("h1:has-text('Blind text quiz')")
    first = page.locator(".quiz-question").nth(0)
    first.get_by_label("The weather tomorrow").check()
    first.locator("button", has_text="Check").click()
    first.locator("text=Not quite").wait_for()
    assert "The selected font" in first.locator("[aria-live]").inner_text()

    first.get_by_label("The selected font").check()
    first.locator("button", has_text="Check").click()
    first.locator("text=Right.").wait_for()
    assert "[1]" in first.locator("[aria-live]").inner_text()  # the explanation cites

    second = page.locator(".quiz-question").nth(1)
    second.get_by_label("Your answer").fill("All the letters of the alphabet")
    second.locator("button", has_text="Check").click()
    second.locator("text=Right.").wait_for()
    assert page.console.unexpected() == []
