import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from ingest.tests import office_files
from notebooks.models import Notebook

pytestmark = pytest.mark.django_db(transaction=True)

QUESTIONS = [
    {"id": "s-1", "file": "deck.pptx", "lang": "en", "question": "When do herons fish?",
     "quote": "Herons fish at dawn", "where": {"slide": 2}},
    {"id": "s-2", "file": "deck.pptx", "lang": "en", "question": "What did the speaker add?",
     "quote": "not in the deck", "where": {"slide": 1}},
    {"id": "d-1", "file": "notes.docx", "lang": "en", "question": "Where does moss grow?",
     "quote": "Moss grows on the north side", "where": {"heading_path": ["Forest", "Moss"]}},
]  # fmt: skip


@pytest.fixture
def place_set(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    office_files.pptx(
        docs / "deck.pptx",
        [
            ("Ponds", "Grey herons wait at the edge of the pond.", ""),
            ("Herons", "Herons fish at dawn and rest at noon.", "Mention the fog."),
        ],
    )
    office_files.docx(
        docs / "notes.docx",
        office_files.paragraph("Forest", "Heading1")
        + office_files.paragraph("Moss", "Heading2")
        + office_files.paragraph("Moss grows on the north side of old oak trees."),
    )
    questions = tmp_path / "questions.jsonl"
    questions.write_text("\n".join(json.dumps(row) for row in QUESTIONS))
    return questions, docs


def run(*args: str) -> str:
    out = StringIO()
    call_command("evaluate", *args, stdout=out)
    return out.getvalue()


def test_places_mode_scores_quotes_places_and_retrieval_per_kind(fake_openai, settings, place_set):
    settings.CHAT_MODEL = ""
    questions, docs = place_set

    figures = json.loads(run("--places", str(questions), "--docs", str(docs), "--json"))

    pptx, docx = figures["kinds"]["pptx"], figures["kinds"]["docx"]
    assert (pptx["questions"], pptx["quote_found"], pptx["place_right"]) == (2, 1, 1)
    assert pptx["retrieved@8"] == 1
    assert [missed["id"] for missed in pptx["missed"]] == ["s-2"]
    assert (docx["questions"], docx["quote_found"], docx["place_right"]) == (1, 1, 1)
    assert docx["retrieved@8"] == 1
    assert pptx["refused"] + docx["refused"] <= 1  # s-2 asks what no slide says
    assert not Notebook.objects.exists()


def test_places_mode_prints_a_line_per_kind_and_the_questions_it_missed(
    fake_openai, settings, place_set
):
    settings.CHAT_MODEL = ""
    questions, docs = place_set

    printed = run("--places", str(questions), "--docs", str(docs)).splitlines()

    pptx = next(line for line in printed if line.startswith("pptx: "))
    assert pptx.startswith("pptx: 2 questions; place retrieved @1 ")
    assert pptx.endswith("quote found 1/2, at its place 1/2")
    assert any(line.startswith("  s-2: where ") and "retrieved" in line for line in printed)
    assert any(line.startswith("docx: 1 questions; place retrieved") for line in printed)


def test_places_and_pages_run_apart(place_set):
    questions, docs = place_set

    with pytest.raises(CommandError, match="apart"):
        run("--places", str(questions), "--pages", str(questions), "--docs", str(docs))


def test_answers_mode_reads_every_answer_with_the_places_it_cites(fake_openai, place_set):
    questions, docs = place_set
    fake_openai.chat_replies += ["Herons fish at dawn [1]. They sleep in trees."]

    figures = json.loads(
        run("--places", str(questions), "--docs", str(docs), "--answers", "--limit", "1", "--json")
    )

    [row] = figures["answers"]
    assert row["answer"] == "Herons fish at dawn [1]. They sleep in trees."
    assert row["gold_cited"] and row["gold"] == {"slide": 2}
    assert row["cited_places"] == ["slide 2 › Herons"]
    assert (row["sentences"], row["supported_sentences"], row["marker_only"]) == (2, 1, False)
    pptx = figures["kinds"]["pptx"]
    assert (pptx["questions"], pptx["sentences"], pptx["supported_sentences"]) == (1, 2, 1)
    printed = run("--places", str(questions), "--docs", str(docs), "--answers", "--limit", "1")
    assert "s-1 [llm, " in printed and 'gold {"slide": 2} cited [' in printed
    assert "Q: When do herons fish?" in printed


def test_a_place_question_the_model_failed_is_counted_apart(fake_openai, place_set):
    questions, docs = place_set
    fake_openai.fail_next("garbage", endpoint="chat/completions")
    fake_openai.chat_replies += ["Moss grows on the north side of old oak trees [1]."] * 2

    figures = json.loads(
        run("--places", str(questions), "--docs", str(docs), "--answers", "--json")
    )

    assert [failure["id"] for failure in figures["kinds"]["pptx"]["failed"]] == ["s-1"]
    assert len(figures["answers"]) == 2
