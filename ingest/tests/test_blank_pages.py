"""Blank rendered pages are not sent to the vision reader, and the source info says so."""

import random

import pytest
from PIL import Image, ImageDraw, ImageFont
from pypdf import PdfWriter

from billing.models import Usage
from ingest.loaders.image import is_blank
from ingest.tests.data import PDFS
from ingest.tests.pictures import scanned_pdf, text_image
from library.models import Source

# A page as pypdfium2 renders A4 at 150 dpi.
A4 = (1240, 1754)


def page(colour="white") -> Image.Image:
    return Image.new("RGB", A4, colour)


def test_a_white_or_uniform_page_is_blank():
    assert is_blank(page())
    assert is_blank(page("black"))
    assert is_blank(page((250, 245, 230)))  # yellowed paper


def test_scanner_noise_and_a_few_specks_are_still_blank():
    noisy = page()
    pixels = noisy.load()
    rng = random.Random(7)
    for _ in range(200_000):  # faint grain all over
        x, y = rng.randrange(A4[0]), rng.randrange(A4[1])
        pixels[x, y] = (235, 235, 235)
    draw = ImageDraw.Draw(noisy)
    for x, y in [(100, 200), (900, 1500), (640, 80)]:  # three specks of dust
        draw.ellipse((x, y, x + 3, y + 3), fill="black")

    assert is_blank(noisy)


def test_one_line_of_small_text_is_not_blank():
    written = page()
    font = ImageFont.load_default(size=14)
    ImageDraw.Draw(written).text((100, 800), "A short note at the bottom.", font=font, fill="black")

    assert not is_blank(written)


def test_a_picture_without_words_is_not_blank():
    gradient = Image.linear_gradient("L").resize(A4).convert("RGB")

    assert not is_blank(gradient)


@pytest.fixture
def fake_vision(fake_openai, settings):
    settings.VISION_MODEL = "fake-vision"
    return fake_openai


def test_blank_scanned_pages_cost_no_vision_call_and_the_source_info_says_so(
    fake_vision, notebook, add_ready_source, tmp_path
):
    writer = PdfWriter()
    writer.append(PDFS / "pypdf/crazyones.pdf")  # a page with a text layer
    writer.append(
        scanned_pdf(
            tmp_path / "scan.pdf",
            [page(), text_image(["A scanned page with words"]), page()],
        )
    )
    mixed = tmp_path / "mixed.pdf"
    writer.write(mixed)
    fake_vision.vision_replies.append("A scanned page with words.")

    source = add_ready_source(notebook, mixed.read_bytes(), name="mixed.pdf")

    assert len(fake_vision.vision_requests) == 1
    assert Usage.objects.filter(kind="vision").count() == 1
    assert source.page_count == 4
    assert sorted(source.chunks.values_list("page", flat=True).distinct()) == [1, 3]
    assert source.reader == (
        "PDF text layer + vision model fake-vision (1 page); 2 blank pages skipped"
    )


def test_a_pdf_of_blank_scans_fails_without_a_call_saying_they_are_blank(
    fake_vision, notebook, tmp_path
):
    from django.core.files.base import ContentFile

    from ingest.services import add_source, process_source

    blank = scanned_pdf(tmp_path / "blank.pdf", [page(), page()])
    upload = ContentFile(blank.read_bytes(), name="blank.pdf")
    added = add_source(owner=notebook.owner, notebook=notebook, upload=upload)

    source = process_source(source_id=added.source.pk)

    assert source.status == Source.Status.FAILED
    assert "No text could be read from any of this PDF's 2 pages" in source.error
    assert "2 blank, not sent to it" in source.error
    assert fake_vision.vision_requests == []
