"""PDF capture modes: text layer, vision, and auto (vision only where the text layer fails)."""

import pytest
from pypdf import PdfReader, PdfWriter

from billing.models import Usage
from ingest.loaders import load_passages
from ingest.passages import LoaderError
from ingest.services import process_source
from ingest.tests.data import PDFS
from ingest.tests.pictures import scanned_pdf, text_image
from library.models import Source
from providers.errors import ProviderError

pytestmark = pytest.mark.django_db

SCAN_LINES = ["Scanned pages keep their secrets", "until a reader looks at them."]


@pytest.fixture
def scan(tmp_path):
    return scanned_pdf(tmp_path / "scan.pdf", [text_image(SCAN_LINES)])


@pytest.fixture
def fake_vision(fake_openai, settings):
    settings.VISION_MODEL = "fake-vision"
    return fake_openai


@pytest.mark.local_models
def test_auto_mode_reads_a_scanned_pdf_with_the_local_ocr(scan, owner):
    passages, page_count, reader, _, _ = load_passages("pdf", scan, pdf_capture="auto", user=owner)

    assert page_count == 1
    assert reader == "rapidocr"
    assert [(passage.text, passage.page) for passage in passages] == [("\n".join(SCAN_LINES), 1)]
    usage = Usage.objects.get()
    assert (usage.user, usage.kind, usage.model) == (owner, "vision", "local/rapidocr")


@pytest.mark.local_models
def test_auto_mode_reads_a_real_scanned_patent_page_with_the_local_ocr():
    # Three image-only pages from the European Patent Office, encrypted with no password;
    # the first and the last are blank.
    passages, page_count, reader, _, _ = load_passages(
        "pdf", PDFS / "pypdf/encrypted_doc_no_id.pdf", pdf_capture="auto"
    )

    assert page_count == 3
    assert reader == "rapidocr; 2 blank pages skipped"
    page_two = {passage.page: passage.text for passage in passages}[2]
    assert "WO 2003/036426 A3" in page_two
    assert "with international search report" in page_two


def test_text_mode_on_a_scanned_pdf_fails_naming_the_mode(scan):
    with pytest.raises(LoaderError) as failure:
        load_passages("pdf", scan, pdf_capture="text")

    assert "capture mode 'text'" in str(failure.value)
    assert not Usage.objects.exists()


@pytest.mark.local_models
def test_a_rotated_scanned_page_is_read_upright(tmp_path):
    sideways = text_image(["Sideways pages are turned upright"]).rotate(90, expand=True)
    writer = PdfWriter()
    for page in PdfReader(scanned_pdf(tmp_path / "sideways.pdf", [sideways])).pages:
        writer.add_page(page.rotate(90))  # /Rotate 90: a viewer shows it upright
    rotated = tmp_path / "rotated.pdf"
    writer.write(rotated)

    passages, _, _, _, _ = load_passages("pdf", rotated, pdf_capture="auto")

    assert passages[0].text == "Sideways pages are turned upright"


@pytest.mark.local_models
def test_a_blank_scanned_pdf_fails_naming_the_mode_and_the_reader(tmp_path):
    from PIL import Image

    blank = scanned_pdf(tmp_path / "blank.pdf", [Image.new("RGB", (600, 800), "white")])

    with pytest.raises(LoaderError) as failure:
        load_passages("pdf", blank, pdf_capture="vision")

    assert "No text could be read" in str(failure.value)
    assert "capture mode 'vision'" in str(failure.value)
    assert "rapidocr" in str(failure.value)


def test_vision_mode_sends_every_page_to_the_vision_model_and_bills_it(fake_vision, owner):
    fake_vision.vision_replies.extend(f"Page {n} as the vision model read it." for n in range(4))

    passages, page_count, reader, _, _ = load_passages(
        "pdf", PDFS / "sample-files/pdflatex-4-pages.pdf", pdf_capture="vision", user=owner
    )

    assert page_count == 4
    assert reader == "vision model fake-vision"
    assert [passage.page for passage in passages] == [1, 2, 3, 4]
    assert passages[0].text == "Page 0 as the vision model read it."
    assert len(fake_vision.vision_requests) == 4
    [part] = [
        part
        for part in fake_vision.vision_requests[0].body["messages"][0]["content"]
        if part["type"] == "image_url"
    ]
    assert part["image_url"]["url"].startswith("data:image/png;base64,")
    usages = list(Usage.objects.filter(kind="vision"))
    assert len(usages) == 4
    assert all(usage.model == "fake-vision" and usage.user == owner for usage in usages)
    assert all(usage.input_tokens > 0 and usage.output_tokens > 0 for usage in usages)


def test_a_page_where_vision_finds_no_text_is_skipped(fake_vision):
    fake_vision.vision_replies.extend(["First page.", "", "Third page.", "Fourth page."])

    passages, _, _, _, _ = load_passages(
        "pdf", PDFS / "sample-files/pdflatex-4-pages.pdf", pdf_capture="vision"
    )

    assert [passage.page for passage in passages] == [1, 3, 4]


def test_more_pages_for_vision_than_the_cap_fails_before_any_call(fake_vision, settings):
    settings.PDF_VISION_MAX_PAGES = 3

    with pytest.raises(LoaderError) as failure:
        load_passages("pdf", PDFS / "sample-files/pdflatex-4-pages.pdf", pdf_capture="vision")

    assert "4 pages" in str(failure.value)
    assert "at most 3" in str(failure.value)
    assert "PDF_VISION_MAX_PAGES" in str(failure.value)
    assert fake_vision.requests == []


def test_the_vision_cap_counts_only_pages_without_a_text_layer_in_auto_mode(settings):
    settings.PDF_VISION_MAX_PAGES = 1

    passages, _, reader, _, _ = load_passages(
        "pdf", PDFS / "sample-files/pdflatex-4-pages.pdf", pdf_capture="auto"
    )

    assert len(passages) == 4
    assert reader == "PDF text layer"


def test_auto_mode_sends_only_pages_without_a_text_layer_to_vision(fake_vision, tmp_path):
    writer = PdfWriter()
    writer.append(PDFS / "pypdf/crazyones.pdf")
    writer.append(scanned_pdf(tmp_path / "scan.pdf", [text_image(SCAN_LINES)]))
    writer.append(PDFS / "pypdf/crazyones.pdf")
    mixed = tmp_path / "mixed.pdf"
    writer.write(mixed)
    fake_vision.vision_replies.append("Scanned pages keep their secrets.")

    passages, page_count, reader, _, _ = load_passages("pdf", mixed, pdf_capture="auto")

    assert page_count == 3
    assert len(fake_vision.vision_requests) == 1
    assert [passage.page for passage in passages] == [1, 2, 3]
    assert passages[0].text.startswith("The Crazy Ones")
    assert passages[1].text == "Scanned pages keep their secrets."
    assert reader == "PDF text layer + vision model fake-vision (1 page)"


def test_imagemagick_pages_without_a_legible_text_layer_each_get_one_vision_call(fake_vision):
    # Six tiny image pages; four carry the word "Background" as text, too short to be legible.
    path = PDFS / "sample-files/imagemagick-images.pdf"
    fake_vision.vision_replies.extend(f"A gradient test image, number {n}." for n in range(6))

    passages, page_count, reader, _, _ = load_passages("pdf", path, pdf_capture="auto")

    assert page_count == 6
    assert len(fake_vision.vision_requests) == 6
    assert [passage.page for passage in passages] == [1, 2, 3, 4, 5, 6]
    assert reader == "vision model fake-vision"


def test_a_vision_model_error_fails_with_a_message_naming_the_role(fake_vision):
    fake_vision.fail_next("500", times=2)

    with pytest.raises(ProviderError) as failure:
        load_passages("pdf", PDFS / "sample-files/grayscale-image.pdf", pdf_capture="auto")

    assert "The vision model at" in str(failure.value)
    assert "HTTP 500" in str(failure.value)


def test_an_unknown_capture_mode_fails():
    with pytest.raises(LoaderError, match="Unknown PDF capture mode 'ocr'"):
        load_passages("pdf", PDFS / "pypdf/crazyones.pdf", pdf_capture="ocr")


@pytest.mark.local_models
def test_a_scanned_pdf_added_in_auto_mode_ends_ready_naming_its_reader(
    fake_openai, notebook, add_ready_source, scan
):
    source = add_ready_source(notebook, scan.read_bytes(), name="scan.pdf")

    assert (source.kind, source.pdf_capture) == ("pdf", "auto")
    assert source.reader == "rapidocr"
    assert "secrets" in source.chunks.get().text
    assert Usage.objects.filter(kind="vision", user=notebook.owner).count() == 1


def test_a_pdf_added_in_text_mode_keeps_the_mode_and_fails_on_a_scan(fake_openai, notebook, scan):
    from django.core.files.base import ContentFile

    from ingest.services import add_source

    added = add_source(
        owner=notebook.owner,
        notebook=notebook,
        upload=ContentFile(scan.read_bytes(), name="scan.pdf"),
        pdf_capture="text",
    )
    source = process_source(source_id=added.source.pk)

    assert source.pdf_capture == "text"
    assert source.status == Source.Status.FAILED
    assert "capture mode 'text'" in source.error
