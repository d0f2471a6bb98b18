"""A multi-page TIFF (a fax, a scanner's batch) is read page by page, like a scanned PDF."""

import io

import pytest
from PIL import Image

from billing.models import Usage
from ingest.loaders import load_passages
from ingest.passages import LoaderError
from ingest.tests.pictures import text_image
from library.models import Source

pytestmark = pytest.mark.django_db

FIRST = ["The first page of the fax", "asks for the annual report."]
THIRD = ["The third page answers", "that it is late."]


def tiff(pages: list[Image.Image]) -> bytes:
    buffer = io.BytesIO()
    first, *rest = pages
    first.save(buffer, format="TIFF", save_all=True, append_images=rest, compression="tiff_lzw")
    return buffer.getvalue()


def blank_page() -> Image.Image:
    return Image.new("RGB", (1240, 400), "white")


@pytest.fixture
def fax(tmp_path):
    path = tmp_path / "fax.tiff"
    path.write_bytes(tiff([text_image(FIRST), blank_page(), text_image(THIRD)]))
    return path


@pytest.fixture
def fake_vision(fake_openai, settings):
    settings.VISION_MODEL = "fake-vision"
    return fake_openai


def test_each_page_goes_to_the_vision_model_as_a_page_of_its_own(fake_vision, fax, owner):
    fake_vision.vision_replies.extend(["Page one, as read.", "Page three, as read."])
    progress: list[tuple[int, int, bool]] = []

    passages, page_count, reader, _, _ = load_passages(
        "image", fax, user=owner, on_progress=lambda *call: progress.append(call)
    )

    assert page_count == 3
    assert [(passage.page, passage.text) for passage in passages] == [
        (1, "Page one, as read."),
        (3, "Page three, as read."),
    ]
    # The blank second page costs no call, and the source info says it was skipped.
    assert len(fake_vision.vision_requests) == 2
    assert Usage.objects.filter(kind="vision", user=owner).count() == 2
    assert reader == "vision model fake-vision; 1 blank page skipped"
    assert progress == [(1, 3, True), (2, 3, True), (3, 3, True)]


@pytest.mark.local_models
def test_a_fax_becomes_a_source_with_pages_through_the_local_ocr(
    fake_openai, notebook, add_ready_source, fax
):
    source = add_ready_source(notebook, fax.read_bytes(), name="fax.tiff")

    assert (source.kind, source.page_count) == (Source.Kind.IMAGE, 3)
    assert source.reader == "rapidocr; 1 blank page skipped"
    pages = {chunk.page: chunk.text for chunk in source.chunks.all()}
    assert pages == {1: "\n".join(FIRST), 3: "\n".join(THIRD)}


def test_a_single_page_tiff_stays_one_passage_without_a_page(fake_vision, tmp_path):
    fake_vision.vision_replies.append("One page only.")
    path = tmp_path / "one.tiff"
    path.write_bytes(tiff([text_image(FIRST)]))

    passages, page_count, _, _, _ = load_passages("image", path)

    assert page_count is None
    assert [(passage.page, passage.text) for passage in passages] == [(None, "One page only.")]


def test_more_pages_than_the_vision_cap_fail_before_any_call(fake_vision, settings, fax):
    settings.PDF_VISION_MAX_PAGES = 2

    with pytest.raises(LoaderError, match="3 pages.*at most 2.*PDF_VISION_MAX_PAGES"):
        load_passages("image", fax)
    assert fake_vision.vision_requests == []


def test_a_page_beyond_the_pixel_cap_fails_naming_it(fake_vision, settings, tmp_path):
    settings.IMAGE_MAX_PIXELS = 1240 * 400
    path = tmp_path / "mixed.tiff"
    # The first page is within the cap (Pillow checks only that one); the second is not.
    path.write_bytes(tiff([text_image(FIRST, width=400), Image.new("RGB", (2000, 2000))]))
    fake_vision.vision_replies.append("Page one.")

    with pytest.raises(LoaderError, match="Page 2 of this TIFF.*IMAGE_MAX_PIXELS"):
        load_passages("image", path)


def test_a_tiff_of_blank_pages_fails_saying_so(fake_vision, tmp_path):
    path = tmp_path / "blank.tiff"
    path.write_bytes(tiff([blank_page(), blank_page()]))

    with pytest.raises(LoaderError, match="any of this TIFF's 2 pages.*2 blank"):
        load_passages("image", path)
    assert fake_vision.vision_requests == []
