import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from ingest.tests.hostile import FONT, pdf
from library.models import Source
from notebooks.models import Notebook

pytestmark = pytest.mark.django_db(transaction=True)

PAGES = [
    "Grey herons wait at the edge of the pond for fish to come near.",
    "Sourdough bread needs a starter, flour and a warm kitchen overnight.",
    "Moss grows on the north side of old oak trees in damp forests.",
]


def three_page_pdf() -> bytes:
    """A real PDF with one sentence on each of its three pages."""
    count = len(PAGES)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count %d >>"
        % (b" ".join(b"%d 0 R" % (4 + 2 * i) for i in range(count)), count),
        FONT,
    ]
    for i, text in enumerate(PAGES):
        stream = b"BT /F1 12 Tf 72 720 Td (%s) Tj ET" % text.encode()
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R"
            b" /Resources << /Font << /F1 3 0 R >> >> >>" % (5 + 2 * i)
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    return pdf(objects)


QUESTIONS = [
    # Retrieved first and cited: the model's reply cites the first passage.
    {"id": "en-1", "doc": "nature.pdf", "lang": "en", "question": "Where do grey herons wait?",
     "page": 1, "also_answered_on": [], "quote": "herons wait at the  edge of the pond"},
    # Its gold page is page 3, also_answered_on page 2; the reply cites nothing.
    {"id": "en-2", "doc": "nature.pdf", "lang": "en", "question": "What does sourdough need?",
     "page": 3, "also_answered_on": [2], "quote": "not on any page"},
    {"id": "de-1", "doc": "nature.pdf", "lang": "de", "question": "Where does moss grow?",
     "page": 3, "also_answered_on": [], "quote": "Moss grows on the north side"},
]  # fmt: skip
OFFTOPIC = [
    {"doc": "nature.pdf", "lang": "en", "question": "Who painted the Mona Lisa?"},
    # Its words are the document's: the search cannot tell, the model's reply cites a page.
    {"doc": "nature.pdf", "lang": "en", "question": "Do grey herons bake sourdough bread?"},
]


@pytest.fixture
def page_set(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "nature.pdf").write_bytes(three_page_pdf())
    questions = tmp_path / "questions.jsonl"
    questions.write_text("\n".join(json.dumps(row) for row in QUESTIONS))
    offtopic = tmp_path / "offtopic.jsonl"
    offtopic.write_text("\n".join(json.dumps(row) for row in OFFTOPIC))
    return questions, docs, offtopic


def run(*args: str) -> str:
    out = StringIO()
    call_command("evaluate", *args, stdout=out)
    return out.getvalue()


def test_pages_mode_scores_retrieval_citations_and_quotes_per_language(fake_openai, page_set):
    questions, docs, offtopic = page_set
    fake_openai.chat_replies += [
        "They wait at the edge of the pond [1].",
        "It needs nothing special.",
        "Moss grows on the north side of old oak trees [1].",
        # The Mona Lisa is refused by the search, with no model call.
        "Herons eat fish, not bread [2].",  # off-topic, a passage cited
    ]

    figures = json.loads(
        run("--pages", str(questions), "--docs", str(docs), "--offtopic", str(offtopic), "--json")
    )

    en, de = figures["questions"]["en"], figures["questions"]["de"]
    assert en["questions"] == 2
    # en-1 finds page 1 first; en-2's pages 2 and 3 are two of the three passages.
    assert (en["retrieved@1"], en["retrieved@4"], en["retrieved@8"]) == (2, 2, 2)
    assert en["cited"] == 1
    assert [missed["id"] for missed in en["missed"]] == ["en-2"]
    assert en["missed"][0]["cited"] == []
    assert en["refused"] == 0
    assert en["quote_found"] == 1  # en-1's (with its doubled space); en-2's is not on page 3
    assert (de["questions"], de["retrieved@1"], de["cited"], de["quote_found"]) == (1, 1, 1, 1)
    off = figures["offtopic"]["en"]
    assert (off["questions"], off["refused"]) == (2, 1)
    assert off["cited"][0]["question"] == "Do grey herons bake sourdough bread?"
    assert len(off["cited"][0]["pages"]) == 1
    # The notebooks are gone, the document stays for the next run.
    assert not Notebook.objects.exists()
    assert Source.objects.get().status == Source.Status.READY


def test_a_second_run_reads_the_pdf_once(fake_openai, page_set):
    questions, docs, _ = page_set
    run("--pages", str(questions), "--docs", str(docs), "--json")
    embedded = len(fake_openai.embedding_requests)

    printed = run("--pages", str(questions), "--docs", str(docs))

    # Only the three questions are embedded again: the PDF's chunks are reused.
    assert len(fake_openai.embedding_requests) - embedded == 3
    assert Source.objects.count() == 1
    assert "en: 2 questions; gold page retrieved @1 " in printed
    assert "de: 1 questions" in printed


def test_without_a_chat_model_the_extractive_answers_are_scored(fake_openai, settings, page_set):
    settings.CHAT_MODEL = ""
    questions, docs, _ = page_set

    figures = json.loads(run("--pages", str(questions), "--docs", str(docs), "--json"))

    assert figures["questions"]["en"]["retrieved@1"] >= 1
    assert figures["questions"]["de"]["cited"] == 1  # the moss sentence is quoted from page 3


def test_a_question_naming_a_missing_pdf_fails_naming_it(fake_openai, page_set, tmp_path):
    questions, _, _ = page_set
    empty = tmp_path / "empty"
    empty.mkdir()

    with pytest.raises(CommandError, match="nature.pdf: no such document"):
        run("--pages", str(questions), "--docs", str(empty))


def test_offtopic_needs_pages(page_set):
    _, docs, offtopic = page_set

    with pytest.raises(CommandError, match="--offtopic goes with --pages"):
        run("--offtopic", str(offtopic), "--docs", str(docs))


def test_answers_mode_reads_every_answer_as_a_person_would(fake_openai, page_set):
    questions, docs, _ = page_set
    fake_openai.chat_replies += [
        "They wait at the edge of the pond [1]. Penguins read newspapers.",
        "[1][2] [1][3]",  # only markers: quoted from the passages instead
        "Moss grows on the north side of old oak trees. [1]",  # the marker after the stop
    ]

    figures = json.loads(
        run("--pages", str(questions), "--docs", str(docs), "--answers", "--limit", "3", "--json")
    )

    first, second, third = figures["answers"]
    assert first["answer"].startswith("They wait at the edge of the pond [1].")
    assert (first["gold_cited"], first["sentences"], first["supported_sentences"]) == (
        True,
        2,
        1,
    )
    assert first["cited_pages"] == [1]
    assert second["mode"] == "extractive" and not second["marker_only"]
    assert third["gold_cited"] and third["seconds"] >= 0
    assert (third["sentences"], third["supported_sentences"]) == (1, 1)
    en = figures["questions"]["en"]
    assert (en["sentences"], en["supported_sentences"], en["marker_only"]) == (
        2 + second["sentences"],
        1 + second["supported_sentences"],
        0,
    )
    printed = run("--pages", str(questions), "--docs", str(docs), "--answers", "--limit", "1")
    assert "sentences with a verified citation" in printed
    assert "Q: Where do grey herons wait?" in printed


def test_a_question_the_model_failed_is_counted_apart_and_the_run_goes_on(fake_openai, page_set):
    questions, docs, _ = page_set
    fake_openai.fail_next("garbage", endpoint="chat/completions")
    fake_openai.chat_replies += ["Moss grows on the north side of old oak trees [1]."] * 2

    figures = json.loads(
        run("--pages", str(questions), "--docs", str(docs), "--answers", "--limit", "3", "--json")
    )

    en = figures["questions"]["en"]
    assert [failure["id"] for failure in en["failed"]] == ["en-1"]
    assert "not a stream" in en["failed"][0]["error"]
    assert en["questions"] == 2 and len(figures["answers"]) == 2


def test_a_refusal_is_written_in_the_questions_language(fake_openai, tmp_path):
    # A command has no reader whose language it could use; the question set names its own.
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "nature.pdf").write_bytes(three_page_pdf())
    questions = tmp_path / "questions.jsonl"
    questions.write_text(
        json.dumps(
            {"id": "de-off", "doc": "nature.pdf", "lang": "de", "page": 1,
             "question": "Wer hat die Mona Lisa gemalt?", "quote": ""}
        )
    )  # fmt: skip
    fake_openai.chat_replies.append("NOT_IN_SOURCES")  # if the search lets it through

    figures = json.loads(run("--pages", str(questions), "--docs", str(docs), "--answers", "--json"))

    [row] = figures["answers"]
    assert row["refused"], row
    assert row["answer"].startswith(("Keine Textstelle", "Ihre Quellen scheinen")), row["answer"]
