"""While pages are read as images, the progress says who reads them: the local OCR or the
vision model."""

import pytest
from django.core.files.base import ContentFile
from django.urls import reverse
from PIL import Image

from ingest.services import add_source, process_source
from ingest.tests.data import PDFS
from ingest.tests.pictures import scanned_pdf
from library.models import Source

FOUR_PAGES = PDFS / "sample-files/pdflatex-4-pages.pdf"


def record_readers(monkeypatch) -> list[tuple[str, str]]:
    """(stage, reader) as the row reads right after every progress write."""
    seen: list[tuple[str, str]] = []
    write = Source.report_progress

    def recording(source, **progress):
        write(source, **progress)
        row = Source.objects.get(pk=source.pk)
        seen.append((row.stage, row.reader))

    monkeypatch.setattr(Source, "report_progress", recording)
    return seen


def add(notebook, path, **options):
    upload = ContentFile(path.read_bytes(), name=path.name)
    return add_source(owner=notebook.owner, notebook=notebook, upload=upload, **options).source


def test_pages_sent_to_the_vision_model_name_it_while_they_are_read(
    fake_openai, settings, notebook, monkeypatch
):
    settings.VISION_MODEL = "fake-vision"
    fake_openai.vision_replies.extend(f"Page {n} as read." for n in range(4))
    seen = record_readers(monkeypatch)
    source = add(notebook, FOUR_PAGES, pdf_capture="vision")

    source = process_source(source_id=source.pk)

    reading = {reader for stage, reader in seen if stage == "reading_images"}
    assert reading == {"vision model fake-vision"}
    assert source.reader == "vision model fake-vision"


def test_pages_for_the_local_ocr_name_it_while_they_are_read(
    fake_openai, notebook, monkeypatch, tmp_path
):
    # A blank scan: the page is reported as read without running the OCR on it.
    scan = scanned_pdf(tmp_path / "blank.pdf", [Image.new("RGB", (1240, 1754), "white")])
    seen = record_readers(monkeypatch)
    source = add(notebook, scan, pdf_capture="auto")

    process_source(source_id=source.pk)

    assert ("reading_images", "rapidocr") in seen
    assert {reader for stage, reader in seen if stage == "reading_images"} == {"rapidocr"}


@pytest.mark.parametrize(
    ("reader", "label"),
    [
        ("vision model fake-vision", "reading page 2 of 5 with the vision model fake-vision"),
        ("rapidocr", "reading page 2 of 5 with the local OCR (rapidocr)"),
    ],
)
def test_the_notebook_page_shows_the_reader_in_the_progress_label(client, notebook, reader, label):
    source = add(notebook, FOUR_PAGES)
    Source.objects.filter(pk=source.pk).update(
        status="processing",
        stage="reading_images",
        progress_done=2,
        progress_total=5,
        reader=reader,
    )
    client.force_login(notebook.owner)

    response = client.get(reverse("notebooks:sources", args=[notebook.pk]))

    assert label in response.text
