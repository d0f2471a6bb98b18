"""Running headers, footers and page numbers are not part of a page's text; contents and
index pages are told apart from body pages."""

from __future__ import annotations

from ingest.loaders.furniture import strip_running_lines
from ingest.loaders.navigation import is_navigation_page

SAYINGS = ["Ferns like shade.", "Spores travel far.", "Fronds unroll slowly.", "Moss helps."]


def book(pages: int) -> dict[int, str]:
    return {
        n: f"Field Guide to Ferns 2.1 {n} / {pages}\n{SAYINGS[n % 4]} Page {n} of text.\n"
        f"Printed in {2000 + n}"
        for n in range(1, pages + 1)
    }


def test_a_header_and_footer_repeated_on_every_page_with_its_number_are_removed():
    cleaned = strip_running_lines(book(10))

    assert cleaned[3] == "Moss helps. Page 3 of text."


def test_front_matter_numbered_in_roman_shares_the_body_pages_header():
    pages = book(12)
    pages[1] = "Field Guide to Ferns 2.1 ii\nForeword of the book.\nSigned, the author"

    cleaned = strip_running_lines(pages)

    assert cleaned[1] == "Foreword of the book.\nSigned, the author"


def test_a_line_at_the_top_of_a_few_pages_only_is_kept():
    pages = book(20)
    for n in (4, 9):
        pages[n] = f"Field Guide to Ferns 2.1 {n} / 20\nNote\nFerns need shade {n}.\nEnd {n}"

    cleaned = strip_running_lines(pages)

    assert cleaned[4] == "Note\nFerns need shade 4.\nEnd 4"


def test_a_bare_page_number_at_the_foot_of_pages_is_removed():
    pages = {n: f"Text of page {n}, all different words {n * 7}.\n{n}" for n in (1, 2)}

    assert strip_running_lines(pages) == {
        1: "Text of page 1, all different words 7.",
        2: "Text of page 2, all different words 14.",
    }


def test_a_chapter_title_printed_atop_its_pages_is_removed_when_the_outline_names_it():
    pages = {
        1: "Growing ferns\nSpores need moisture.",
        2: "Growing ferns\nWater them weekly.",
        3: "Pests\nSlugs eat the fronds.",
    }

    cleaned = strip_running_lines(pages, outline_titles=["Growing ferns", "Pests"])

    assert cleaned == {
        1: "Spores need moisture.",
        2: "Water them weekly.",
        3: "Pests\nSlugs eat the fronds.",
    }


def test_a_page_made_only_of_furniture_keeps_its_text():
    pages = book(6)
    pages[6] = "Field Guide to Ferns 2.1 6 / 6"

    assert strip_running_lines(pages)[6] == "Field Guide to Ferns 2.1 6 / 6"


def test_a_table_of_contents_with_dot_leaders_is_a_navigation_page():
    contents = "\n".join(
        f"1.{n} Section title number {n} . . . . . . . . . . . {n * 3}" for n in range(1, 9)
    )

    assert is_navigation_page("Contents\n" + contents)


def test_the_last_lines_of_a_contents_page_are_a_navigation_page():
    page = (
        "A Appendix 232\nA.1 The maze . . . . . . . . 232\nA.2 History . . . . . . 232\n"
        "A.3 Format . . . . 233"
    )

    assert is_navigation_page(page)


def test_an_index_is_a_navigation_page():
    index = "\n".join(f"term{n}, {n}, {n + 40}-{n + 42}" for n in range(10))

    assert is_navigation_page(index)


def test_a_body_page_with_a_few_numbers_is_not_a_navigation_page():
    body = (
        "Ferns reproduce by spores.\nA frond grows 30 cm a year, 12\nThey like shade.\n"
        "Water them weekly.\nSee section 2.1 for pests.\nSlugs are the worst, 3"
    )

    assert not is_navigation_page(body)
