"""A ready source's guide (key topics and questions it can answer) and the chat's suggested
questions: offline made from the source's structure (a PDF's outline, Markdown headings),
never made up when there is none; with a model, one billed call per source."""

from __future__ import annotations

import io
import json

import pytest
from django.urls import reverse
from pypdf import PdfReader, PdfWriter

from billing.models import Usage
from ingest.tests.data import PDFS
from library.models import Source
from notebooks.guides import guides_for, outline_guide, suggested_questions
from notebooks.models import Message, SourceGuide
from notebooks.tests.factories import make_source
from retrieval.chosen_sources import choose_sources

HERONS = b"""# Grey herons

Grey herons live along rivers, lakes and coasts across Europe and Asia.

## 2.1 Breeding

Herons breed in colonies called heronries, often high in tall trees.

## Feeding

They wait motionless in shallow water and strike at fish.

## References

Cramp, 1977.
"""
PLAIN = b"Sea otters hold hands while they sleep so that they do not drift apart."
ZUEGE = b"""# Nachtzuege

Der Nachtzug nach Wien faehrt um elf Uhr.

## Schlafwagen

Die Abteile haben ein bis drei Betten.
"""


def test_markdown_headings_give_topics_and_real_questions(fake_openai, notebook, add_ready_source):
    source = add_ready_source(notebook, HERONS, "herons.md")

    topics, questions = outline_guide(source)

    # Numbering and generic sections ("References") dropped.
    assert topics == ["Grey herons", "Breeding", "Feeding"]
    assert questions == [
        "What does this document say about grey herons?",
        "What does this document say about breeding?",
        "What does this document say about feeding?",
    ]


def test_a_source_without_headings_gets_no_questions(fake_openai, notebook, add_ready_source):
    source = add_ready_source(notebook, PLAIN, "otters.txt")

    assert outline_guide(source) == ([], [])


def test_a_german_source_gets_german_questions(fake_openai, notebook, add_ready_source):
    source = add_ready_source(notebook, ZUEGE, "zuege.md")
    source.language = "de"

    _topics, questions = outline_guide(source)

    assert questions == [
        "Was sagt dieses Dokument zum Thema Nachtzuege?",
        "Was sagt dieses Dokument zum Thema Schlafwagen?",
    ]


def test_a_pdf_outline_gives_its_chapters_first(fake_openai, notebook, add_ready_source):
    writer = PdfWriter(clone_from=PdfReader(PDFS / "sample-files" / "pdflatex-4-pages.pdf"))
    chapter = writer.add_outline_item(title="Console basics", page_number=0)
    writer.add_outline_item(title="How to leave the command prompt", page_number=1, parent=chapter)
    writer.add_outline_item(title="Package management", page_number=2)
    buffer = io.BytesIO()
    writer.write(buffer)
    source = add_ready_source(notebook, buffer.getvalue(), "Debian reference.pdf")

    topics, questions = outline_guide(source)

    assert topics == ["Console basics", "Package management", "How to leave the command prompt"]
    assert questions == [
        "What does “Debian reference” say about console basics?",
        "What does “Debian reference” say about package management?",
        "How to leave the command prompt?",
    ]


def test_the_page_shows_each_sources_guide_and_suggests_questions_across_ticked_ones(
    client, fake_openai, owner, notebook, add_ready_source
):
    herons = add_ready_source(notebook, HERONS, "herons.md")
    zuege = add_ready_source(notebook, ZUEGE, "zuege.md")
    client.force_login(owner)

    page = client.get(reverse("notebooks:detail", args=[notebook.pk])).text

    assert SourceGuide.objects.filter(mode="outline").count() == 2  # made once, stored
    assert "Guide: key topics and questions" in page
    assert '<span class="badge topic">Breeding</span>' in page
    suggested = suggested_questions([zuege, herons], guides_for([zuege, herons]))
    # In turn from each source: the first of each, then the second of the first; each in
    # its source's language (detected at ingest).
    assert suggested == [
        "Was sagt dieses Dokument zum Thema Nachtzuege?",
        "What does this document say about grey herons?",
        "Was sagt dieses Dokument zum Thema Schlafwagen?",
    ]
    assert 'class="suggested-questions"' in page
    for question in suggested:
        assert f'value="{question}"' in page

    choose_sources(user=owner, notebook=notebook, ticked=[herons.pk])
    page = client.get(reverse("notebooks:detail", args=[notebook.pk])).text
    chat_part = page.split('class="suggested-questions"')[1].split("</ul>")[0]
    assert "zuege" not in chat_part and "grey herons" in chat_part


def test_a_suggested_question_asks_with_one_click(
    client, fake_openai, owner, notebook, add_ready_source
):
    add_ready_source(notebook, HERONS, "herons.md")
    client.force_login(owner)
    fake_openai.chat_replies.append("They wait in shallow water [1].")

    response = client.post(
        reverse("notebooks:ask", args=[notebook.pk]),
        {"question": "What does this document say about feeding?"},
        HTTP_HX_REQUEST="true",
    )

    assert response.status_code == 200
    assert Message.objects.filter(role="user").get().content.endswith("about feeding?")


GUIDE_REPLY = json.dumps(
    {
        "topics": ["Heron colonies", "Fishing"],
        "questions": ["Where do grey herons breed?", "How do herons catch fish?"],
    }
)


def test_with_a_model_one_billed_call_at_ingest_writes_the_guide(
    settings, client, fake_openai, owner, notebook, add_ready_source
):
    settings.SOURCE_SUMMARIES = "auto"
    fake_openai.chat_replies += ["Herons breed in colonies and fish in shallows.", GUIDE_REPLY]

    source = add_ready_source(notebook, HERONS, "herons.md")

    summary_call, guide_call = fake_openai.chat_requests
    assert "guide to a document" in guide_call.body["messages"][0]["content"]
    guide = SourceGuide.objects.get(source=source)
    assert (guide.mode, guide.topics, guide.error) == ("llm", ["Heron colonies", "Fishing"], "")
    assert guide.questions == ["Where do grey herons breed?", "How do herons catch fish?"]
    # The summary's call and the guide's, both billed to the source's owner.
    billed = Usage.objects.filter(source=source, kind=Usage.Kind.CHAT, user=owner)
    assert billed.count() == 2

    client.force_login(owner)
    page = client.get(reverse("notebooks:detail", args=[notebook.pk])).text
    fragment = client.get(
        reverse("notebooks:sources", args=[notebook.pk]), HTTP_HX_REQUEST="true"
    ).text

    assert len(fake_openai.chat_requests) == 2  # the page views made no call
    assert '<span class="badge topic">Heron colonies</span>' in page
    assert 'value="Where do grey herons breed?"' in page
    assert "Heron colonies" in fragment


@pytest.mark.parametrize("reply", ["Sorry, no JSON today.", '{"topics": ["Herons"]}', "500"])
def test_a_model_guide_that_fails_leaves_the_outlines_and_the_source_ready(
    reply, settings, client, fake_openai, owner, notebook, add_ready_source
):
    settings.SOURCE_SUMMARIES = "auto"
    fake_openai.chat_replies.append("Herons breed in colonies.")  # the summary's
    if reply == "500":
        fake_openai.fail_next("500", times=2, endpoint="chat/completions", skip=1)
    else:
        fake_openai.chat_replies.append(reply)

    source = add_ready_source(notebook, HERONS, "herons.md")

    guide = SourceGuide.objects.get(source=source)
    assert guide.mode == "outline" and guide.topics == ["Grey herons", "Breeding", "Feeding"]
    assert guide.questions[0] == "What does this document say about grey herons?"
    assert guide.error  # why the model's guide is not shown
    assert source.summary == "Herons breed in colonies."
    calls = len(fake_openai.chat_requests)
    client.force_login(owner)
    page = client.get(reverse("notebooks:detail", args=[notebook.pk])).text
    assert len(fake_openai.chat_requests) == calls
    assert 'value="What does this document say about breeding?"' in page


def test_a_page_view_makes_no_model_call_for_a_source_without_a_guide(
    settings, client, fake_openai, owner, notebook, add_ready_source
):
    # A source read before guides were written at ingest gets the outline's on the page.
    source = add_ready_source(notebook, HERONS, "herons.md")
    SourceGuide.objects.filter(source=source).delete()
    settings.SOURCE_SUMMARIES = "auto"
    client.force_login(owner)

    page = client.get(reverse("notebooks:detail", args=[notebook.pk])).text

    assert not fake_openai.chat_requests
    assert SourceGuide.objects.get(source=source).mode == "outline"
    assert 'value="What does this document say about feeding?"' in page


@pytest.mark.parametrize("kind", ["generated"])
def test_generated_documents_get_no_guide_in_the_list(kind, owner, notebook):
    # The list (and so the guides) leaves generated documents to the studio.
    from retrieval.chosen_sources import listed_sources

    make_source(owner=owner, notebook=notebook, title="Report")
    Source.objects.filter(title="Report").update(kind=kind)

    assert not listed_sources(notebook).exists()


def test_a_name_keeps_its_capital_and_a_common_word_loses_it():
    from notebooks.guides import _question

    text = "The train to Vienna leaves at eleven. Trains to Vienna are full; breeding is rare."

    assert _question("Vienna trains", title="T", language="en", text=text) == (
        "What does “T” say about Vienna trains?"
    )
    assert _question("Breeding", title="T", language="en", text=text) == (
        "What does “T” say about breeding?"
    )
    assert _question("Die Abteile", title="T", language="de") == "Was sagt „T“ über die Abteile?"
    # Without its article a German heading's gender is unknown: no article is guessed.
    assert _question("GNU/Linux-Lehrstunde", title="", language="de") == (
        "Was sagt dieses Dokument zum Thema GNU/Linux-Lehrstunde?"
    )


def test_a_source_read_again_gets_a_new_guide(fake_openai, notebook, add_ready_source):
    source = add_ready_source(notebook, HERONS, "herons.md")
    assert SourceGuide.objects.filter(source=source).exists()  # written at ingest
    Source.objects.filter(pk=source.pk).update(status=Source.Status.PROCESSING)
    source.refresh_from_db()

    assert guides_for([source]) == {}
    assert not SourceGuide.objects.exists()


def test_the_sources_fragment_brings_the_suggestions_once_a_source_is_ready(
    client, fake_openai, owner, notebook
):
    from django.core.files.base import ContentFile

    from ingest.services import add_source, process_source

    added = add_source(
        owner=owner, notebook=notebook, upload=ContentFile(HERONS, name="herons.md")
    ).source
    client.force_login(owner)
    page = client.get(reverse("notebooks:detail", args=[notebook.pk])).text
    sources_url = reverse("notebooks:sources", args=[notebook.pk])
    waiting = client.get(sources_url, HTTP_HX_REQUEST="true").text

    # The box is on the page, empty, for the polled list to fill.
    assert '<div id="suggested-questions" class="suggested-questions">' in page
    assert 'id="suggested-questions" class="suggested-questions" hx-swap-oob="true"' in waiting
    assert "Suggested questions about" not in waiting and "every 2s" in waiting

    process_source(source_id=added.pk)
    ready = client.get(sources_url, HTTP_HX_REQUEST="true").text

    box = ready.split('id="suggested-questions"')[1]
    assert 'hx-swap-oob="true"' in box.split(">")[0]
    assert 'value="What does this document say about breeding?"' in box
    assert "every 2s" not in ready  # nothing left to watch


def test_ticking_brings_the_suggestions_of_the_ticked_sources(
    client, fake_openai, owner, notebook, add_ready_source
):
    herons = add_ready_source(notebook, HERONS, "herons.md")
    add_ready_source(notebook, ZUEGE, "zuege.md")
    client.force_login(owner)

    fragment = client.post(
        reverse("notebooks:choose_sources", args=[notebook.pk]),
        {"ticked": [herons.pk]},
        HTTP_HX_REQUEST="true",
    ).text

    box = fragment.split('id="suggested-questions"')[1]
    assert "grey herons" in box and "zuege" not in box


def test_a_viewer_gets_no_suggestions_in_the_fragment(
    client, fake_openai, owner, outsider, notebook, add_ready_source
):
    from sharing.models import Membership, Role

    add_ready_source(notebook, HERONS, "herons.md")
    Membership.objects.create(notebook=notebook, user=outsider, role=Role.VIEWER)
    client.force_login(outsider)

    fragment = client.get(
        reverse("notebooks:sources", args=[notebook.pk]), HTTP_HX_REQUEST="true"
    ).text

    assert "suggested-questions" not in fragment


def test_a_note_titled_with_its_question_gets_questions_about_this_note(
    fake_openai, owner, notebook
):
    from ingest.notes import make_note_a_source
    from ingest.services import process_source
    from notebooks.services import create_note

    note = create_note(
        user=owner,
        notebook=notebook,
        title="Where do grey herons breed?",  # as "Save to note" titles a saved answer
        content="## Breeding\n\nHerons breed in colonies called heronries [1].",
    )

    source = process_source(source_id=make_note_a_source(note=note).pk)

    assert SourceGuide.objects.get(source=source).questions == [
        "What does this note say about breeding?"
    ]
