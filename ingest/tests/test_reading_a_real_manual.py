"""A real 261-page manual (Debian Reference, ../shared/data/manual-qa) read as a person
would want it: whole words, no running headers, contents pages left out, every chunk in
its section, pages labelled as printed, every gold quote on its page."""

from __future__ import annotations

import json

import pytest

from ingest.chunker import chunk_passages
from ingest.loaders import load_passages
from ingest.tests.data import SHARED_DATA

MANUALS = SHARED_DATA / "manual-qa"
QUESTIONS = [json.loads(line) for line in (MANUALS / "questions.jsonl").open()]


@pytest.fixture(scope="module", params=["en", "de"])
def manual(request):
    path = MANUALS / f"debian-reference.{request.param}.pdf"
    passages, page_count, reader, _, _ = load_passages("pdf", path, pdf_capture="text")
    return request.param, path.name, passages, page_count, reader, chunk_passages(passages)


def test_no_chunk_carries_the_running_header(manual):
    _, _, _, _, _, chunks = manual

    headed = [c for c in chunks if "Debian Reference " in c.text or "Debian-Referenz " in c.text]
    # The title itself still appears in sentences ("This Debian Reference (version 2.100)"),
    # never as "Debian Reference 3 / 233" or "Debian Reference xii" on a line of its own.
    assert not [
        c
        for c in headed
        if any(
            line.startswith(("Debian Reference ", "Debian-Referenz "))
            and (line.split()[-1].isdigit() or line.split()[-1].isalpha() and len(line) < 26)
            for line in c.text.split("\n")
        )
    ]


def test_the_contents_pages_are_read_but_not_searched(manual):
    _, _, passages, _, reader, _ = manual

    pages = {passage.page for passage in passages}
    assert not pages & set(range(5, 23))  # the 18 contents and list-of-tables pages
    assert 31 in pages
    assert reader == "PDF text layer; 18 contents or index pages not searched"


def test_every_body_chunk_knows_its_chapter_and_section(manual):
    language, _, _, _, _, chunks = manual

    body = [chunk for chunk in chunks if chunk.page and chunk.page >= 29]
    assert all(chunk.section for chunk in body)
    first_chapter = "GNU/Linux tutorials" if language == "en" else "GNU/Linux-Lehrstunde"
    on_page_31 = [chunk.section for chunk in body if chunk.page == 31]
    assert on_page_31[0][0] == first_chapter
    assert on_page_31[0][1].startswith("1.1 ")  # the section's number as the page prints it


def test_pages_carry_the_numbers_they_print(manual):
    _, _, passages, _, _, _ = manual

    labels = {passage.page: passage.page_label for passage in passages}
    assert labels[29] == "1"  # label + 28 for the body, as the data set's README says
    assert labels[31] == "3"
    assert labels[24] == "xxiii"


def test_no_word_is_glued_to_the_next(manual):
    _, _, passages, _, _, _ = manual

    words = " ".join(passage.text for passage in passages).split()
    glued = [w for w in words if w.isalpha() and w.islower() and len(w) > 24]
    assert len(glued) <= 2, glued[:10]


def test_every_gold_quote_is_found_verbatim_in_a_chunk_of_its_page(manual):
    language, name, _, _, _, chunks = manual

    missing = []
    for question in (q for q in QUESTIONS if q["doc"] == name):
        quote = " ".join(question["quote"].split())
        page_chunks = [" ".join(c.text.split()) for c in chunks if c.page == question["page"]]
        if not any(quote in text for text in page_chunks):
            missing.append(question["id"])
    assert missing == []


def test_typographic_apostrophes_are_kept(manual):
    language, _, _, _, _, chunks = manual

    texts = "\n".join(chunk.text for chunk in chunks)
    # The manual's text layer writes its apostrophes as ’ (U+2019), in both languages.
    assert texts.count("’") > 100
    if language == "en":
        assert "user’s guide" in texts and "user's guide" not in texts
