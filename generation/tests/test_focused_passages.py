"""A small model gets the part of each passage that matches the question (CHAT_PASSAGE_TOKENS),
not the whole window; the citation still opens and checks the whole passage."""

from __future__ import annotations

import pytest

from generation.answering import answer_question
from generation.focus import focused
from generation.tests.passages import prompt_passages
from language.tokens import estimate_tokens
from providers.local_model import Plan
from providers.local_model_supervisor import LocalModelServer

FILLER = " ".join(f"Sentence number {n} speaks of nothing in particular." for n in range(40))
ANSWER = "The NEW queue holds packages that enter the archive for the first time."
MANUAL = FILLER + " " + ANSWER + " It is checked by the FTP masters. " + FILLER


def test_a_long_passage_is_cut_to_the_sentence_that_matches_and_its_neighbours():
    excerpt = focused(MANUAL, "What is the NEW queue for?", 60)

    assert ANSWER in excerpt
    assert "checked by the FTP masters" in excerpt
    assert estimate_tokens(excerpt) <= 60 + 4  # and the ellipses
    assert excerpt.startswith("… ") and excerpt.endswith(" …")


def test_a_short_passage_or_no_budget_keeps_it_whole():
    assert focused(ANSWER, "NEW queue", 60) == ANSWER
    assert focused(MANUAL, "NEW queue", 0) == MANUAL


@pytest.mark.django_db
def test_the_prompt_holds_the_excerpt_and_the_citation_the_whole_passage(
    fake_openai, owner, notebook, add_ready_source, settings
):
    settings.CHAT_PASSAGE_TOKENS = 60
    add_ready_source(notebook, MANUAL.encode(), "manual.txt")
    fake_openai.chat_replies.append("Packages new to the archive wait in the NEW queue [1].")

    answer = answer_question(user=owner, notebook=notebook, question="What is the NEW queue?")

    (sent,) = fake_openai.chat_requests
    passages = prompt_passages(sent)
    assert passages and all(len(text) < 400 for text in passages.values())
    assert ANSWER in passages[1]
    (citation,) = answer.message.citations.all()
    assert ANSWER in citation.chunk.text and len(citation.chunk.text) > 400
    assert citation.supported


TABLE = "\n".join(
    [
        "Average tax rates by income.",
        "| Gross income | Single | Married, one earner |",
        "| --- | --- | --- |",
        *(f"| €{n},000 | {n / 10:.1f}% | {n / 20:.1f}% |" for n in range(10, 90)),
        "| €95,000 | 27.4% | 19.9% |",
        *(f"| €{n},000 | {n / 10:.1f}% | {n / 20:.1f}% |" for n in range(100, 140)),
    ]
)


def test_a_tables_row_is_given_with_its_columns_names():
    excerpt = focused(TABLE, "What is the rate on €95,000 for a single person?", 80)

    assert "Gross income: €95,000; Single: 27.4%; Married, one earner: 19.9%" in excerpt
    assert "Average tax rates" not in excerpt
    assert "| --- |" not in excerpt
    assert estimate_tokens(excerpt) <= 80


def test_a_question_in_the_headers_words_gets_the_row_that_holds_its_other_words():
    # "single" and "rate" are the header's; "95,000" is the row's.
    excerpt = focused(TABLE, "What is the single rate on €95,000 of gross income?", 80)

    assert "Gross income: €95,000; Single: 27.4%; Married, one earner: 19.9%" in excerpt


def test_a_question_naming_a_record_by_one_digit_gets_that_records_row():
    records = "\n".join(
        [
            "| Record Number | Description of the Row | Percent Increment | date |",
            "|" + " --- |" * 4,
            *(
                f"| {n} | This is row {n} of 10 | {n * 7.5:.1f}% | 0{n}-01-1960 |"
                for n in range(10)
            ),
        ]
    )

    excerpt = focused(records, "Which date is recorded for record number 5?", 40)

    assert "Record Number: 5; Description of the Row: This is row 5 of 10" in excerpt


def test_a_title_over_the_columns_is_said_once_and_two_header_rows_name_a_column():
    wide = "\n".join(
        [
            "| | " + " | ".join(["Average tax rates in % of annual earnings"] * 3) + " | | |",
            "| Full rate | | Single | Single | Married | Married |",
            "| € | £ | 1999 | 2000 | 1999 | 2000 |",
            "|" + " --- |" * 6,
            *(
                f"| {n},000 | {n * 0.79:.0f} | {n / 9:.1f}% | 9.9% | 1.0% | 0.5% |"
                for n in range(10, 60)
            ),
        ]
    )

    excerpt = focused(wide, "What was the single rate in 2000 on €15,000?", 40)

    lines = excerpt.splitlines()
    assert lines[0] == "Average tax rates in % of annual earnings"
    assert lines[1].startswith(
        "Full rate €: 15,000; £: 12; Single 1999: 1.7%; Single 2000: 9.9%; Married 1999: 1.0%"
    )


@pytest.mark.django_db
def test_the_local_model_is_given_four_passages(
    fake_openai, owner, notebook, add_ready_source, settings, tmp_path, monkeypatch
):
    # serve's settings for its local model, unless the environment sets them.
    monkeypatch.delenv("RETRIEVAL_K", raising=False)
    plan = Plan(tmp_path / "m.gguf", "m", "a model", 2, 4096, "")
    settings.RETRIEVAL_K = int(
        LocalModelServer(plan, data_dir=tmp_path).environment()["RETRIEVAL_K"]
    )
    for n in range(6):
        add_ready_source(notebook, f"The NEW queue rule number {n} is kept.".encode(), f"q{n}.txt")
    fake_openai.chat_replies.append("Rule number 0 is kept in the NEW queue [1].")

    answer_question(user=owner, notebook=notebook, question="Which rule is kept in the NEW queue?")

    (sent,) = fake_openai.chat_requests
    assert len(prompt_passages(sent)) == 4
    monkeypatch.setenv("RETRIEVAL_K", "8")
    assert "RETRIEVAL_K" not in LocalModelServer(plan, data_dir=tmp_path).environment()
