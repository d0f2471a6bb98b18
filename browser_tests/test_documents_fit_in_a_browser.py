"""Generated documents fit their page at desktop and phone width: quiz boxes, table columns
and mind-map nodes wrap instead of running out of their panel, and every text of a drawing
stays inside its box, as Chromium lays them out with a real font."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from generation.documents.models import GeneratedDocument
from notebooks.models import Notebook

from .helpers import OVERFLOWS

PATH = "/usr/share/doc/debian-reference-common/html/index.en.html"
LONG = (
    "Debian keeps the configuration of the Advanced Package Tool in "
    f"{PATH}, and a long sentence like this one runs across the whole panel"
)
DOCUMENTS = {
    "quiz": {
        "title": "A quiz with long questions",
        "questions": [
            {
                "type": "multiple_choice",
                "question": f"Where is the index of the reference kept? {LONG}?",
                "options": [PATH, LONG, "Nowhere at all"],
                "answer_index": 0,
                "explanation": f"{LONG} [1].",
            },
            {
                "type": "short_answer",
                "question": "DOESTHEQUIZKEEPAVERYLONGWORDWITHOUTANYBREAKINSIDEITSBOX?",
                "answer": "yes",
                "explanation": "It does [1].",
            },
        ],
    },
    "table": {
        "title": "Figures and dates",
        "columns": ["Figure or date", "Context", "Document", "Section"],
        "rows": [
            {
                "cells": ["2 GB", LONG, "debian-reference.en.pdf", "Debian package management"],
                "source": "[1]",
            },
            {"cells": ["6", f"{LONG} {LONG}", "debian-reference.en.pdf", PATH], "source": "[1]"},
        ],
    },  # fmt: skip
    "mindmap": {
        "title": "A map with long labels",
        "root": {
            "label": "DEBIAN REFERENCE: A VERY LONG TITLE IN CAPITALS FOR THE WHOLE MANUAL",
            "children": [
                {
                    "label": "GNU/LINUX TUTORIALS AND MANY MORE WORDS IN CAPITALS",
                    "children": [
                        {"label": "Console basics", "children": []},
                        {"label": f"Where things are: {PATH}", "children": []},
                    ],
                },
                {
                    "label": "Debian package management, with a longer label than fits",
                    "children": [
                        {"label": "WWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWW", "children": []}
                    ],
                },
            ],
        },
    },
}


# Each text of the drawing inside the box drawn before it.
TEXTS_OUTSIDE_BOXES = """() => {
  const found = [];
  let box = null;
  for (const element of document.querySelectorAll(".drawing svg > *")) {
    if (element.tagName === "rect") box = element.getBBox();
    if (element.tagName !== "text" || !box) continue;
    const text = element.getBBox();
    if (text.x < box.x - 0.5 || text.x + text.width > box.x + box.width + 0.5) {
      found.push(`${element.textContent}: ${text.x}+${text.width} in ${box.x}+${box.width}`);
    }
  }
  return found;
}"""


@pytest.mark.parametrize(
    "viewport", [{"width": 1440, "height": 1000}, {"width": 390, "height": 844}], ids=str
)
def test_generated_documents_fit_their_panel(page_for, live, viewport):
    page = page_for("fiona", viewport=viewport)
    owner = get_user_model().objects.get(username="fiona")
    notebook = Notebook.objects.create(owner=owner, title="Layout")
    for kind, data in DOCUMENTS.items():
        document = GeneratedDocument.objects.create(
            notebook=notebook,
            owner=owner,
            kind=kind,
            status=GeneratedDocument.Status.READY,
            mode=GeneratedDocument.Mode.LLM,
            title=data["title"],
            content=data,
        )
        page.goto(f"/notebooks/{notebook.pk}/studio/{document.pk}/")
        page.wait_for_selector(".document-body")

        assert page.evaluate(OVERFLOWS) == [], kind
        if kind == "table":
            # Every column shows in full, the Document column too, without scrolling.
            last = page.locator(".generated-table th").last.bounding_box()
            panel = page.locator(".document-body").bounding_box()
            assert last["x"] + last["width"] <= panel["x"] + panel["width"] + 1
            # No citation is open: the passage panel takes no room from the table.
            assert panel["width"] >= 0.75 * viewport["width"]
        if kind == "mindmap":
            outside = page.evaluate(TEXTS_OUTSIDE_BOXES)
            assert outside == [], "\n".join(outside)
    assert page.console.unexpected() == []


def test_the_audio_options_show_for_an_audio_overview_only(page_for, live):
    page = page_for("olga")
    owner = get_user_model().objects.get(username="olga")
    notebook = Notebook.objects.create(owner=owner, title="Options")
    page.goto(f"/notebooks/{notebook.pk}/")

    page.select_option("#studio-kind", "report")
    assert not page.locator(".audio-options").is_visible()
    page.select_option("#studio-kind", "audio")
    assert page.locator("#studio-audio-format").is_visible()
    assert page.locator("#studio-length").input_value() == "default"
