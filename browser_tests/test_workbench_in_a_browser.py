"""The notebook as a workbench in Chromium: an answer saved to a note whose citation opens
its passage from the note; a note written, made a source and asked about; a source unticked
and never cited, and with none ticked, no asking."""

from __future__ import annotations

from django.contrib.auth import get_user_model

from notebooks.models import Message, Note, Notebook

from .conftest import SCREENSHOTS
from .helpers import DROP

HERONS = "Grey herons stand still at the edge of the pond and wait for fish. " * 12
TRAINS = "The night train to Vienna leaves the central station at eleven each evening. " * 12


def open_notebook(page, username: str, title: str) -> Notebook:
    owner = get_user_model().objects.get(username=username)
    notebook = Notebook.objects.create(owner=owner, title=title)
    page.goto(f"/notebooks/{notebook.pk}/")
    page.on("dialog", lambda dialog: dialog.accept())  # the confirmations
    return notebook


def add_text(page, name: str, text: str, ready: int) -> None:
    page.evaluate(DROP, [name, text])
    page.wait_for_function(
        f"() => document.querySelectorAll('#sources .source .badge-ready').length >= {ready}",
        timeout=90_000,
    )


def ask(page, question: str) -> None:
    answers = page.locator("#chat .message-assistant").count()
    page.fill("#question", question)
    page.click("#ask-button")
    page.wait_for_function(
        f"() => document.querySelectorAll('#chat .message-assistant .citations li').length"
        f" && document.querySelectorAll('#chat .message-assistant').length > {answers}"
        " && !document.querySelector('#chat .message-streaming')",
        timeout=60_000,
    )


def test_an_answer_saved_to_a_note_opens_its_citation_from_the_note(page_for, live):
    page = page_for("nora")
    open_notebook(page, "nora", "Ponds")
    add_text(page, "herons.txt", HERONS, ready=1)
    live.models.chat_replies.append("Herons wait for fish at the edge of the pond [1].")
    ask(page, "What do herons wait for?")

    page.locator("#chat .message-assistant").last.locator("button.save-note").click()
    card = page.locator("#notes .note-card")
    card.wait_for()
    assert "Herons wait for fish" in card.inner_text()
    assert "What do herons wait for?" in card.locator(".note-title").inner_text()

    # Its [1] opens the passage beside the chat, as the answer's does.
    card.locator("a.cite").first.click()
    passage = page.locator("#passage .passage")
    passage.wait_for()
    assert passage.locator("h2").inner_text().startswith("[1] herons")
    assert "wait for fish" in passage.inner_text()
    assert Note.objects.get().citations.count() == 1
    page.set_viewport_size({"width": 1400, "height": 1000})
    page.screenshot(path=str(SCREENSHOTS / "workbench-notes.png"), full_page=False)
    assert page.console.unexpected() == []


def test_a_written_note_made_a_source_is_asked_about_and_cited(page_for, live):
    page = page_for("olga")
    open_notebook(page, "olga", "Birds")

    page.click("text=Write a note")
    page.fill("#new-note-title", "Kingfishers")
    page.fill("#new-note-content", "Kingfishers **dive** into the river to catch small fish.")
    page.click(".new-note button[type=submit]")
    card = page.locator("#notes .note-card", has_text="Kingfishers")
    card.wait_for()
    assert card.locator("strong").inner_text() == "dive"  # Markdown, rendered

    card.locator("button", has_text="Use as a source").click()
    # The note is read and embedded by the worker like an upload; the panel polls meanwhile.
    page.wait_for_selector("#notes .note-card .badge-ready", timeout=90_000)
    source = page.locator("#sources .source", has_text="Kingfishers")
    assert "Note" in source.inner_text()

    live.models.chat_replies.append("They catch small fish [1].")
    ask(page, "What do kingfishers catch?")
    answer = page.locator("#chat .message-assistant").last
    assert "Kingfishers" in answer.locator(".citations").inner_text()
    answer.locator("a.cite").first.click()
    page.locator("#passage .passage").wait_for()
    assert "into the river to catch small fish" in page.locator("#passage").inner_text()

    # Back to a note only: the source goes, the note stays.
    page.locator("#notes .note-card button", has_text="Stop using as a source").click()
    page.wait_for_selector("#sources .source", state="detached")
    assert page.locator("#notes .note-card", has_text="Kingfishers").count() == 1
    assert page.console.unexpected() == []


def test_an_unticked_source_is_never_cited_and_none_ticked_means_no_asking(page_for, live):
    page = page_for("pia")
    open_notebook(page, "pia", "Travel")
    add_text(page, "herons.txt", HERONS, ready=1)
    add_text(page, "trains.txt", TRAINS, ready=2)
    assert "All 2 sources" in page.locator("#ask-scope").inner_text()

    page.locator("#sources .source", has_text="herons").locator(".source-tick").uncheck()
    page.wait_for_function(
        "() => document.querySelector('#ask-scope').textContent.includes('1 of 2 sources')"
    )
    # The model cites every passage it is given; none may come from the unticked source. The
    # question is about both, so the ticked one still covers it (a question about herons
    # alone would be refused as not covered: only trains are searched).
    live.models.chat_replies.append("Herons wait [1]. Trains leave [2]. More [3].")
    ask(page, "Where do grey herons wait, and when does the night train leave?")
    citations = page.locator("#chat .message-assistant").last.locator(".citations")
    assert "trains" in citations.inner_text()
    assert "herons" not in citations.inner_text()
    answer = Message.objects.filter(role="assistant").get()
    assert {cited.source.title for cited in answer.citations.all()} == {"trains"}
    page.set_viewport_size({"width": 1400, "height": 900})
    page.screenshot(path=str(SCREENSHOTS / "workbench-chosen-sources.png"), caret="initial")

    # None ticked: the Ask button is off and the box says why; "all" turns it back on.
    page.click("#choose-sources button[name=none]")
    page.wait_for_selector("#ask-button[disabled]")
    assert "No source is ticked" in page.locator("#ask-scope").inner_text()
    page.click("#choose-sources button[name=all]")
    page.wait_for_selector("#ask-button:not([disabled])")
    assert page.locator("#sources .source-tick:checked").count() == 2
    assert page.console.unexpected() == []


GUIDED = """# Grey herons

Grey herons live along rivers, lakes and coasts across Europe and Asia.

## Breeding

Herons breed in colonies called heronries, often high in tall trees.

## Feeding

They wait motionless in shallow water and strike at fish.
"""


def test_a_suggested_question_is_asked_with_one_click(page_for, live):
    page = page_for("quinn")
    open_notebook(page, "quinn", "Herons")
    assert not page.locator(".suggested-questions").is_visible()  # none before a source
    add_text(page, "herons.md", GUIDED, ready=1)

    # No reload: the polled sources list brings them, made from the ready source's headings.
    suggestions = page.locator(".suggested-questions button")
    page.wait_for_function(
        "() => document.querySelectorAll('.suggested-questions button').length === 3",
        timeout=30_000,
    )
    assert page.locator(".suggested-questions").is_visible()
    assert suggestions.nth(1).inner_text() == "What does this document say about breeding?"
    guide = page.locator("#sources .source-guide")
    guide.locator("summary").click()
    assert "Feeding" in guide.locator(".guide-topics").inner_text()
    page.set_viewport_size({"width": 1400, "height": 900})
    page.screenshot(path=str(SCREENSHOTS / "workbench-suggestions.png"), caret="initial")

    live.models.chat_replies.append("Herons breed in colonies called heronries [1].")
    suggestions.nth(1).click()
    page.wait_for_selector("#chat .message-assistant a.cite", timeout=60_000)
    assert "What does this document say about breeding?" in page.locator("#chat").inner_text()
    assert "heronries" in page.locator("#chat .message-assistant").last.inner_text()
    assert not page.locator(".suggested-questions").is_visible()  # the chat has begun
    assert page.console.unexpected() == []
