"""A small model gets the part of each passage that matches the question (CHAT_PASSAGE_TOKENS),
not the whole window; the citation still opens and checks the whole passage."""

from __future__ import annotations

import pytest

from generation.answering import answer_question
from generation.focus import focused
from generation.tests.passages import prompt_passages
from language.tokens import estimate_tokens

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


def test_a_tables_row_comes_under_the_tables_header():
    excerpt = focused(TABLE, "What is the rate on €95,000 for a single person?", 80)

    lines = excerpt.splitlines()
    assert lines[:2] == ["| Gross income | Single | Married, one earner |", "| --- | --- | --- |"]
    assert "| €95,000 | 27.4% | 19.9% |" in lines
    assert "Average tax rates" not in excerpt
    assert estimate_tokens(excerpt) <= 80 + 4


def test_a_row_near_the_header_is_given_with_it_once():
    excerpt = focused(TABLE, "What is the rate on €11,000?", 80)

    assert excerpt.count("| Gross income |") == 1
    assert excerpt.startswith("… | Gross income") or excerpt.startswith("Average tax rates")
    assert "| €11,000 | 1.1% | 0.6% |" in excerpt
