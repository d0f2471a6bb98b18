"""Where the quote's highlight lands on a rendered PDF page (no HTTP, no database)."""

from pathlib import Path

from ingest.loaders.pdf_text_layer import read_text_layer
from ingest.loaders.pdfium_pages import find_quote
from ingest.page_images import render_page
from ingest.tests.data import PDFS

CRAZY_ONES = PDFS / "pypdf" / "crazyones.pdf"
FOUR_PAGES = PDFS / "sample-files" / "pdflatex-4-pages.pdf"
ROTATED = PDFS / "sample-files" / "habibi-rotated.pdf"


def _page_text(path: Path, page: int) -> str:
    """The page's text as ingest stores it (cleaned, NFKC), which is where quotes come from."""
    return read_text_layer(path).texts[page]


def _is_tinted(image, box) -> bool:
    """Some pixel inside the box is the highlight's yellow rather than white or black."""
    for x in range(box.left, box.right, 3):
        r, g, b = image.getpixel((x, (box.top + box.bottom) // 2))
        if r > 200 and g > 180 and b < 190:
            return True
    return False


def test_a_quote_over_two_lines_gets_one_rectangle_per_line_in_reading_order():
    text = _page_text(CRAZY_ONES, 1)
    start = text.index("The ones who see things")
    quote = text[start : text.index("fond of rules.") + len("fond of rules. And\nthey have")]

    rendered = render_page(CRAZY_ONES, 1, quote=quote)

    width, height = rendered.image.size
    assert len(rendered.boxes) == 2
    for box in rendered.boxes:
        assert 0 <= box.left < box.right <= width
        assert 0 <= box.top < box.bottom <= height
        assert _is_tinted(rendered.image, box)
    first, second = rendered.boxes
    assert first.bottom <= second.top


def test_a_quote_from_the_top_of_the_page_is_highlighted_in_the_top_part():
    text = _page_text(CRAZY_ONES, 1)
    quote = text[text.index("Heres to the crazy ones.") :].split("\n")[0]

    rendered = render_page(CRAZY_ONES, 1, quote=quote)

    assert len(rendered.boxes) == 1
    assert rendered.boxes[0].bottom < rendered.image.size[1] / 3


def test_a_quote_with_a_ligature_is_found():
    # The text layer reads "misﬁts", NFKC makes it "misfits"; PDFium's boxes keep the glyph.
    assert "misfits" in _page_text(CRAZY_ONES, 1)

    rendered = render_page(CRAZY_ONES, 1, quote="The misfits. The rebels.")

    assert len(rendered.boxes) == 1


def test_a_sentence_the_page_repeats_is_highlighted_where_it_was_cited():
    quote = "Hello, here is some text without a meaning."

    first = render_page(FOUR_PAGES, 1, quote=quote, near=0.0)
    last = render_page(FOUR_PAGES, 1, quote=quote, near=1.0)

    assert first.boxes[0].top < last.boxes[0].top


def test_a_quote_that_is_not_on_the_page_renders_the_page_without_highlights():
    plain = render_page(CRAZY_ONES, 1)

    rendered = render_page(CRAZY_ONES, 1, quote="Nothing on this page says this at all.")

    assert rendered.boxes == []
    assert rendered.image.size == plain.image.size
    assert rendered.image.tobytes() == plain.image.tobytes()


def test_a_rotated_page_is_rendered_upright_with_the_highlight_on_the_word():
    rendered = render_page(ROTATED, 1, quote="habibi")

    width, height = rendered.image.size
    assert width > height  # /Rotate 90 on a portrait A4 page
    [box] = rendered.boxes
    # The word runs down the page, so its box is taller than wide.
    assert box.bottom - box.top > box.right - box.left
    assert 0 <= box.left < box.right <= width and 0 <= box.top < box.bottom <= height


def test_find_quote_ignores_spaces_line_breaks_and_hyphens():
    page = "It was a mod-\nern  fish, they said."

    start, end = find_quote(page, "modern fish")

    assert page[start:end] == "mod-\nern  fish"


def test_find_quote_falls_back_to_the_quotes_first_and_last_words():
    page = "Alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron."
    quote = "Alpha beta gamma delta epsilon ZETA-ish eta theta iota kappa lambda mu nu xi omicron."

    start, end = find_quote(page, quote)

    assert page[start:end] == page[:-1]
