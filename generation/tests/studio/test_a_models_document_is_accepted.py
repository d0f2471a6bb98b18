"""A small model's document is accepted as answers are: claims left without a marker get the
marker of the passage that supports them (placed by Loupe, and shown so), markers naming no
passage are dropped, claims no passage supports are left out and counted; only a mostly
unsupported reply is rejected, saying what share, after a repair call told item by item."""

import pytest
from django.template.loader import render_to_string
from django.urls import reverse

from billing.models import Usage
from generation.documents import acceptance, deadline
from generation.documents.kinds import report
from generation.documents.models import GeneratedDocument
from generation.documents.services import writing
from generation.tests.studio.conftest import reply

SUPPORTED_ROWS = [
    {"cells": ["Grey heron height", "95 cm"], "source": ""},
    {"cells": ["Night train passengers in 2019", "1.4 million a year"], "source": ""},
    {"cells": ["Largest British heronry in 2019", "200 nests"], "source": ""},
]
UNSUPPORTED_ROWS = [
    {"cells": ["Moon landing", "1969"], "source": "[1]"},
    {"cells": ["Speed of light", "299,792 km/s"], "source": ""},
    {"cells": ["Boiling point of water", "100 °C"], "source": ""},
    {"cells": ["Tallest mountain", "Everest, 8,849 m"], "source": ""},
]


def table(rows):
    return reply({"title": "Figures", "columns": ["What", "Value"], "rows": rows})


def test_a_reply_without_any_marker_is_accepted_with_every_item_placed_by_loupe(
    client, fake_openai, owner, notebook, studio_sources, make_document
):
    fake_openai.chat_replies.append(table(SUPPORTED_ROWS))

    document = make_document("table")

    assert document.status == GeneratedDocument.Status.READY, document.error
    assert len(fake_openai.chat_requests) == 1  # no repair call
    rows = document.data["rows"]
    assert [row["source"] for row in rows] == ["[1]", "[2]", "[3]"]
    citations = list(document.citations.all())
    assert all(cited.attributed for cited in citations)
    assert [cited.supported for cited in citations] == [True, True, True]
    assert "95 cm" in citations[0].quote and "1.4 million" in citations[1].quote
    assert citations[1].source.title == "trains"
    assert document.unsupported_dropped == 0
    client.force_login(owner)
    page = client.get(reverse("studio:document", args=[notebook.pk, document.pk])).content.decode()
    assert page.count("placed by Loupe") == 3
    assert 'class="cite cite-attributed"' in page


def test_report_sentences_without_markers_are_attributed_and_unsupported_ones_left_out(
    client, fake_openai, owner, notebook, studio_sources, make_document
):
    markdown = (
        "## Herons\n\n"
        "- Grey herons live along rivers, lakes and coasts.\n"
        "- Herons breed in colonies called heronries [1].\n"
        "- Herons are the national bird of Peru and sing at dawn.\n\n"
        "## Trains\n\n"
        "Sleeper cabins hold one to three beds and include breakfast."
    )
    fake_openai.chat_replies.append(reply({"title": "R", "markdown": markdown}))

    document = make_document("report")

    assert document.status == GeneratedDocument.Status.READY, document.error
    text = document.data["markdown"]
    assert "Peru" not in text  # no passage says so: left out, and counted
    assert document.unsupported_dropped == 1
    assert "- Grey herons live along rivers, lakes and coasts [" in text
    assert "include breakfast [" in text
    placed = {cited.n for cited in document.citations.all() if cited.attributed}
    assert placed and len(placed) < document.citations.count()  # [1] was the model's own
    client.force_login(owner)
    page = client.get(reverse("studio:document", args=[notebook.pk, document.pk])).content.decode()
    assert "Loupe left out 1 claim of the model’s that no passage supports." in page


def test_markers_naming_no_passage_are_dropped_and_the_claim_attributed(
    fake_openai, studio_sources, make_document
):
    rows = [{**row, "source": "[41][97]"} for row in SUPPORTED_ROWS]
    fake_openai.chat_replies.append(table(rows))

    document = make_document("table")

    assert document.status == GeneratedDocument.Status.READY, document.error
    assert [row["source"] for row in document.data["rows"]] == ["[1]", "[2]", "[3]"]
    assert all(cited.attributed for cited in document.citations.all())


def test_an_item_no_passage_supports_is_left_out_and_counted(
    fake_openai, studio_sources, make_document
):
    fake_openai.chat_replies.append(table(SUPPORTED_ROWS + UNSUPPORTED_ROWS[:1]))

    document = make_document("table")

    assert document.status == GeneratedDocument.Status.READY, document.error
    assert len(document.data["rows"]) == 3
    assert "Moon landing" not in str(document.data)
    assert document.unsupported_dropped == 1


def test_a_mostly_unsupported_reply_is_repaired_once_then_rejected_with_the_share(
    fake_openai, notebook, studio_sources, make_document
):
    mostly = table(SUPPORTED_ROWS[:1] + UNSUPPORTED_ROWS)
    fake_openai.chat_replies += [mostly, mostly]

    document = make_document("table")

    assert document.status == GeneratedDocument.Status.FAILED
    assert "no passage supports 4 of its 5 claims (80%)" in document.error
    assert document.source is None
    assert Usage.objects.filter(kind="chat", notebook=notebook).count() == 2

    # The second try was told what exists and what was wrong, item by item.
    passages = fake_openai.chat_requests[0].body["messages"][1]["content"].count("\n[")
    repair = fake_openai.chat_requests[1].body["messages"][-1]["content"]
    assert f"The passages are numbered [1] to [{passages}]; no other number exists." in repair
    assert "- row 2 “Moon landing; 1969.”: no passage supports it; left out" in repair
    assert "- row 5 “Tallest mountain; Everest, 8,849 m.”: no passage supports it" in repair
    assert "row 1" not in repair  # the supported row was fine
    assert "not the same one" in repair


def test_a_repair_names_markers_that_name_no_passage(fake_openai, studio_sources, make_document):
    rows = [{**UNSUPPORTED_ROWS[0], "source": "[7][99]"}, *UNSUPPORTED_ROWS[1:]]
    fake_openai.chat_replies += [table(rows), table(SUPPORTED_ROWS)]

    document = make_document("table")

    assert document.status == GeneratedDocument.Status.READY, document.error
    repair = fake_openai.chat_requests[1].body["messages"][-1]["content"]
    assert "- row 1 “Moon landing; 1969.” cites [99], which names no passage" in repair


def test_every_generator_call_is_capped_by_its_kind(
    fake_openai, settings, notebook, studio_sources, make_document
):
    fake_openai.chat_replies += [table(SUPPORTED_ROWS)]
    make_document("table")
    fake_openai.chat_replies += [reply({"title": "M", "root": {"label": "x", "children": []}})]
    make_document("mindmap")

    table_call, map_call = fake_openai.chat_requests
    assert table_call.body["max_tokens"] == 1600
    assert map_call.body["max_tokens"] == 1200


def test_a_reply_cut_off_at_its_cap_is_repaired_told_so(
    fake_openai, monkeypatch, studio_sources, make_document
):
    monkeypatch.setitem(writing.OUTPUT_TOKENS, "table", 30)
    short = reply(
        {"title": "F", "columns": ["What"], "rows": [{"cells": ["Heron 95 cm tall"], "source": ""}]}
    )
    fake_openai.chat_replies += [table(SUPPORTED_ROWS * 3), short]

    document = make_document("table")

    assert document.status == GeneratedDocument.Status.READY, document.error
    assert fake_openai.chat_requests[0].body["max_tokens"] == 30
    repair = fake_openai.chat_requests[1].body["messages"][-1]["content"]
    assert "it was cut off at 30 tokens, the most a table may take" in repair


def test_a_report_stopped_at_its_most_characters_keeps_only_its_finished_sentences(
    fake_openai, monkeypatch, studio_sources, make_document
):
    # As llama.cpp's grammar stops a local model at the schema's maxLength: mid-word.
    finished = "## Herons\n\nHerons breed in colonies called heronries [1]. "
    stopped = finished + "A grey heron stands about 95 cm tall and wei"
    monkeypatch.setitem(acceptance.CLAIMS, "report", acceptance.Prose("markdown", len(stopped)))
    fake_openai.chat_replies.append(reply({"title": "R", "markdown": stopped}))

    document = make_document("report")

    assert document.status == GeneratedDocument.Status.READY, document.error
    assert document.data["markdown"] == finished.strip()
    assert document.unsupported_dropped == 0


def test_the_model_is_given_the_reports_most_characters_so_a_grammar_stops_it_there(
    fake_openai, studio_sources, make_document
):
    fake_openai.chat_replies.append(reply({"title": "R", "markdown": "Herons breed [1]."}))

    make_document("report")

    system = fake_openai.chat_requests[0].body["messages"][0]["content"]
    assert f'"maxLength": {report.MARKDOWN_CHARS}' in system
    assert acceptance.CLAIMS["report"].limit == report.MARKDOWN_CHARS
    # An extractive report (each chapter of a long manual) is not bounded.
    assert "maxLength" not in report.SCHEMA["properties"]["markdown"]


def test_a_generation_over_its_time_budget_fails_saying_so(
    fake_openai, settings, studio_sources, make_document
):
    settings.GENERATION_TIMEOUT_SECONDS = 0.5
    settings.OPENAI_MAX_RETRIES = 0
    fake_openai.slow_seconds = 2.0
    fake_openai.fail_next("slow", endpoint="chat/completions")

    document = make_document("report")

    assert document.status == GeneratedDocument.Status.FAILED
    assert "took longer than GENERATION_TIMEOUT_SECONDS (0.5 s)" in document.error


@pytest.mark.django_db(transaction=True)
def test_a_generated_document_costs_no_summary_call_of_its_own(
    fake_openai, settings, notebook, studio_sources, make_document
):
    settings.SOURCE_SUMMARIES = "auto"  # the sources' own summaries were made already
    fake_openai.chat_replies.append(table(SUPPORTED_ROWS))

    document = make_document("table")

    assert document.source.summary and document.source.summary_mode == "extractive"
    assert len(fake_openai.chat_requests) == 1  # the document's own call only


def test_a_report_section_that_lost_every_sentence_loses_its_heading():
    from generation.documents.acceptance import _tidy

    cut = (
        "## Herons\n\n- \n- Herons nest [1].\n\n"
        "## Moons\n\n- \n\n### Craters\n\n"
        "## Trains\n\nThey run [2]."
    )

    assert _tidy(cut) == "## Herons\n\n- Herons nest [1].\n\n## Trains\n\nThey run [2]."


def test_a_document_being_written_says_how_many_words_so_far(
    client, owner, notebook, fake_openai, monkeypatch, studio_sources, make_document
):
    """A slow model writes a report for minutes: the page (and `generate`, which gives up
    when nothing moves) see the words grow, as the reply streams in."""
    monkeypatch.setattr(deadline, "WRITTEN_EVERY_SECONDS", 0.2)
    fake_openai.stream_delay = 0.02
    markdown = " ".join(["Herons breed in colonies called heronries [1]."] * 12)
    fake_openai.chat_replies.append(reply({"title": "R", "markdown": markdown}))
    seen: list[tuple[str, int]] = []
    report_progress = GeneratedDocument.report_progress

    def spy(document, *, stage, done=0, total=0, **also):
        seen.append((stage, done))
        report_progress(document, stage=stage, done=done, total=total, **also)
        if stage == GeneratedDocument.Stage.WRITING and done > 1:
            page = render_to_string("generation/_status.html", {"document": document})
            assert f"writing, {done} words so far" in " ".join(page.split())

    monkeypatch.setattr(GeneratedDocument, "report_progress", spy)

    document = make_document("report")

    assert document.status == GeneratedDocument.Status.READY, document.error
    assert fake_openai.chat_requests[0].body["stream"] is True
    words = [done for stage, done in seen if stage == GeneratedDocument.Stage.WRITING and done]
    assert len(words) >= 2 and words == sorted(words)


def test_items_and_sentences_a_looping_model_repeats_are_kept_once(
    fake_openai, studio_sources, make_document
):
    card = {"front": "Where do herons breed?", "back": "In colonies called heronries [1]."}
    fake_openai.chat_replies.append(reply({"title": "Herons", "cards": [card] * 12}))
    sentence = "Herons breed in colonies called heronries [1]. "
    fake_openai.chat_replies.append(reply({"title": "R", "markdown": sentence * 9}))

    cards = make_document("flashcards")
    report = make_document("report")

    assert cards.status == GeneratedDocument.Status.READY, cards.error
    assert [c["front"] for c in cards.data["cards"]] == ["Where do herons breed?"]
    assert report.data["markdown"] == sentence.strip()
    assert (cards.unsupported_dropped, report.unsupported_dropped) == (0, 0)
