"""Every passage and chunk knows the section it sits in: from the PDF's outline, or from the
headings the text shows."""

from __future__ import annotations

from ingest.chunker import chunk_passages
from ingest.passages import Passage
from ingest.structure import (
    OutlineEntry,
    SectionStart,
    headings_in_text,
    named_headings,
    sane_outline,
    section_at,
    sections_from_outline,
    starts_from_headings,
)

WORDS = " ".join(f"word{n}" for n in range(60))


def test_an_outline_entry_starts_where_its_page_prints_the_title_with_its_number():
    pages = {
        1: "Intro text.\n1.1 Ferns in shade\nShade text.",
        2: "More shade text.\n1.2 Watering\nWater text.",
    }
    outline = [
        OutlineEntry(0, "Growing", 1),
        OutlineEntry(1, "Ferns in shade", 1),
        OutlineEntry(1, "Watering", 2),
    ]

    starts = sections_from_outline(outline, pages)

    assert starts[1] == (
        SectionStart(0, ("Growing",)),
        SectionStart(12, ("Growing", "1.1 Ferns in shade")),
    )
    assert starts[2] == (
        SectionStart(0, ("Growing", "1.1 Ferns in shade")),
        SectionStart(17, ("Growing", "1.2 Watering")),
    )


def test_an_outline_that_jumps_back_and_forth_through_the_pages_is_not_used():
    entries = [OutlineEntry(0, f"Entry {n}", page) for n, page in enumerate([5, 1, 9, 2, 7, 3])]

    assert sane_outline(entries, page_count=10) == []


def test_outline_entries_pointing_at_missing_pages_or_absurdly_deep_are_tamed():
    entries = [
        OutlineEntry(0, "Chapter", 1),
        OutlineEntry(40, "Deep", 2),
        OutlineEntry(0, "Nowhere", 99),
    ]

    kept = sane_outline(entries, page_count=3)

    assert [(entry.title, entry.level) for entry in kept] == [("Chapter", 0), ("Deep", 5)]


def test_numbered_headings_are_found_in_order_and_a_list_inside_a_section_is_not():
    text = (
        "1 Introduction\nWhy ferns.\n2 Methods\nWe did this:\n1. Water the plant\n"
        "2. Wait a week\n2.1 Soil\nLoam.\n3 Results\nThey grew."
    )

    labels = [(level, title) for _, level, title in headings_in_text(text)]

    assert labels == [(0, "1 Introduction"), (0, "2 Methods"), (1, "2.1 Soil"), (0, "3 Results")]


def test_markdown_headings_give_the_path_and_code_blocks_are_not_headings():
    text = "# Guide\nIntro.\n```\n# not a heading\n```\n## Install\nSteps.\n### Linux\nApt."

    starts, end = starts_from_headings(headings_in_text(text, markdown=True))

    assert [start.path for start in starts] == [
        ("Guide",),
        ("Guide", "Install"),
        ("Guide", "Install", "Linux"),
    ]
    assert end == ("Guide", "Install", "Linux")
    assert section_at(starts, text.index("Apt")) == ("Guide", "Install", "Linux")


def test_a_web_pages_headings_are_found_in_its_extracted_text():
    text = "Ferns at home\nThey like shade.\nWatering\nWeekly."

    found = named_headings(text, [(1, "Ferns at home"), (2, "Watering")])

    assert [(level, title) for _, level, title in found] == [(1, "Ferns at home"), (2, "Watering")]


def test_chunks_do_not_cross_a_section_start_and_carry_its_path():
    text = f"1.1 Shade\n{WORDS}\n1.2 Water\n{WORDS}"
    sections = (
        SectionStart(0, ("Ferns", "1.1 Shade")),
        SectionStart(text.index("1.2 Water"), ("Ferns", "1.2 Water")),
    )

    chunks = chunk_passages([Passage(text=text, page=3, page_label="iii", sections=sections)])

    assert [chunk.section for chunk in chunks] == [("Ferns", "1.1 Shade"), ("Ferns", "1.2 Water")]
    assert chunks[1].text.startswith("1.2 Water")
    assert [text[c.char_start : c.char_end] for c in chunks] == [c.text for c in chunks]
    assert {chunk.page_label for chunk in chunks} == {"iii"}


def test_a_heading_right_before_its_first_subheading_joins_that_section():
    text = f"2 Care\n2.1 Water\n{WORDS}"
    sections = (
        SectionStart(0, ("2 Care",)),
        SectionStart(text.index("2.1"), ("2 Care", "2.1 Water")),
    )

    chunks = chunk_passages([Passage(text=text, sections=sections)])

    assert len(chunks) == 1
    assert chunks[0].section == ("2 Care", "2.1 Water")
    assert chunks[0].text.startswith("2 Care")


def test_a_markdown_file_is_read_with_its_headings_as_sections(tmp_path):
    from ingest.loaders import load_passages

    path = tmp_path / "guide.md"
    path.write_text(f"# Ferns\n\n## Shade\n\n{WORDS}\n\n## Water\n\n{WORDS}\n")

    passages, _, _, _, _ = load_passages("text", path)
    chunks = chunk_passages(passages)

    assert [chunk.section for chunk in chunks] == [("Ferns", "Shade"), ("Ferns", "Water")]


def test_a_web_page_is_read_with_its_headings_as_sections():
    from ingest.loaders import html

    body = " ".join(f"<p>Paragraph {n} says {WORDS}.</p>" for n in range(2))
    page = html.extract(
        f"<html><body><article><h1>Ferns at home</h1>{body}<h2>Watering</h2>{body}"
        "</article></body></html>".encode()
    )
    chunks = chunk_passages(page.passages)

    assert ("Ferns at home",) in [chunk.section for chunk in chunks]
    assert chunks[-1].section == ("Ferns at home", "Watering")


def test_a_web_pages_first_heading_left_out_of_its_main_text_still_heads_its_sections():
    from ingest.loaders import html

    body = " ".join(f"<p>Paragraph {n} says {WORDS}.</p>" for n in range(2))
    page = html.extract(
        f"<html><body><header><h1>Ferns at home</h1></header><main><article>{body}"
        f"<h2>Watering</h2>{body}</article></main></body></html>".encode()
    )
    chunks = chunk_passages(page.passages)

    assert "Ferns at home" not in page.passages[0].text
    assert chunks[0].section == ("Ferns at home",)
    assert chunks[-1].section == ("Ferns at home", "Watering")
