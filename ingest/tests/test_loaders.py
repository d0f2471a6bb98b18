import codecs
import csv
import re
import time

import pytest

from ingest.loaders import detect_kind, load_passages, pdf, pdf_text_layer, text
from ingest.passages import LoaderError
from ingest.tests.data import PDFS


def index_rows() -> dict[str, dict[str, str]]:
    with (PDFS / "INDEX.tsv").open(newline="", encoding="utf-8") as handle:
        return {row["file"]: row for row in csv.DictReader(handle, delimiter="\t")}


INDEX = index_rows()


def test_a_one_page_pdf_gives_its_text_as_page_one():
    passages, page_count, reader, _, _ = load_passages("pdf", PDFS / "pypdf/crazyones.pdf")

    assert page_count == 1
    assert reader == "PDF text layer"
    assert [passage.page for passage in passages] == [1]
    assert passages[0].text.startswith("The Crazy Ones")
    assert "the round pegs in the square holes" in passages[0].text.lower()


def test_each_page_of_a_multi_page_pdf_keeps_its_number():
    passages, page_count, _, _, _ = load_passages("pdf", PDFS / "sample-files/pdflatex-4-pages.pdf")

    assert page_count == 4
    assert [passage.page for passage in passages] == [1, 2, 3, 4]
    assert passages[0].text.startswith("Hello, here is some text without a meaning.")
    assert passages[1].text.startswith("information. Really?")


def test_an_illegible_page_is_skipped_without_renumbering_the_others():
    passages, page_count, _, _, _ = load_passages(
        "pdf", PDFS / "pypdf/GeoBase_NHNC1_Data_Model_UML_EN.pdf"
    )

    pages = [passage.page for passage in passages]
    assert page_count == 19
    assert 4 not in pages
    assert pages == [1, 2, 3, *range(5, 20)]


def test_a_pdf_encrypted_with_the_empty_password_opens():
    passages, page_count, _, _, _ = load_passages("pdf", PDFS / "pypdf/r3-empty-password.pdf")

    assert page_count == 1
    assert "pdf encryption test" in passages[0].text


def test_a_password_protected_pdf_fails_asking_for_an_unprotected_copy():
    with pytest.raises(LoaderError) as failure:
        load_passages("pdf", PDFS / "pypdf/r2-user-password.pdf")

    assert "password" in str(failure.value)
    assert "without password protection" in str(failure.value)


def test_an_image_only_pdf_fails_naming_the_text_capture_mode():
    with pytest.raises(LoaderError) as failure:
        load_passages("pdf", PDFS / "sample-files/cmyk-image.pdf")

    assert "capture mode 'text'" in str(failure.value)
    assert "'vision'" in str(failure.value)


def test_an_encrypted_image_only_pdf_opens_then_fails_for_lack_of_text():
    with pytest.raises(LoaderError, match="readable text layer"):
        load_passages("pdf", PDFS / "pypdf/encrypted_doc_no_id.pdf")


def test_a_pdf_over_the_page_cap_fails_naming_the_setting(settings):
    settings.PDF_MAX_PAGES = 3

    with pytest.raises(LoaderError, match="PDF_MAX_PAGES"):
        load_passages("pdf", PDFS / "sample-files/pdflatex-4-pages.pdf")


DAMAGED = {
    "garbage": lambda: b"%PDF-1.4 garbage",
    "empty": lambda: b"",
    "truncated": lambda: (PDFS / "pypdf/crazyones.pdf").read_bytes()[:5000],
}


@pytest.mark.parametrize("damage", DAMAGED)
def test_a_damaged_pdf_fails_with_a_readable_loader_error(tmp_path, damage):
    path = tmp_path / "damaged.pdf"
    path.write_bytes(DAMAGED[damage]())

    with pytest.raises(LoaderError) as failure:
        load_passages("pdf", path)

    assert "could not be read as a PDF" in str(failure.value)


ALL_PDFS = sorted(PDFS.glob("*/*.pdf"))


READ_BY_VISION = "Text that the vision model read from the picture of a page."


@pytest.mark.django_db
@pytest.mark.parametrize("path", ALL_PDFS, ids=[f"{p.parent.name}/{p.name}" for p in ALL_PDFS])
def test_every_sample_pdf_gives_passages_or_a_loader_error_in_auto_mode(
    path, fake_openai, settings
):
    """Auto, the default mode, on every real PDF: legible text layers are used as they are,
    every other page is rendered and sent to the vision model (the fake server here; the
    real local OCR has its own tests in test_pdf_capture.py)."""
    settings.VISION_MODEL = "fake-vision"
    fake_openai.vision_replies.extend([READ_BY_VISION] * settings.PDF_VISION_MAX_PAGES)
    row = INDEX.get(f"{path.parent.name}/{path.name}", {})
    started = time.monotonic()
    try:
        passages, page_count, reader, _, _ = load_passages("pdf", path, pdf_capture="auto")
    except LoaderError as exc:
        outcome: str | list = str(exc)
    else:
        outcome = passages
        assert passages
        assert all(1 <= passage.page <= page_count for passage in passages)
        from_text_layer = [passage for passage in passages if passage.text != READ_BY_VISION]
        assert all(pdf.is_readable(passage.text) for passage in from_text_layer)
        # Exactly the pages without a readable text layer went to vision, one call each,
        # but for blank ones, which the source info counts, as it counts the contents pages
        # left out.
        skipped = re.search(r"; (\d+) blank pages? skipped", reader)
        blank = int(skipped.group(1)) if skipped else 0
        left_out = re.search(r"; (\d+) contents or index pages? not searched$", reader)
        navigation = int(left_out.group(1)) if left_out else 0
        assert len(fake_openai.vision_requests) == (
            page_count - len(from_text_layer) - blank - navigation
        )
        assert len(passages) == page_count - blank - navigation
        assert reader.startswith(("PDF text layer", "pypdf text layer")) == bool(from_text_layer)
    assert time.monotonic() - started < 60

    # What the collection's index says about a file must match what the loader does.
    protected = row.get("encrypted") == "yes" and row.get("password") != "(empty user password)"
    if protected:
        assert isinstance(outcome, str)
        assert "password" in outcome
    elif row.get("error"):
        assert isinstance(outcome, str)
        assert outcome
    elif int(row.get("text_chars") or 0) >= 500:
        assert isinstance(outcome, list), outcome


def test_a_page_is_legible_with_twenty_visible_characters_mostly_letters():
    assert pdf_text_layer.is_legible("abcdefghij klmnopqrst")
    assert not pdf_text_layer.is_legible("abcdefghij klmnopqrs")  # 19 visible characters
    assert pdf_text_layer.is_legible("abcdefghijkl 12345678")  # 12 of 20 visible are letters: 60 %
    assert not pdf_text_layer.is_legible("abcdefghijk 123456789")  # 11 of 20: 55 %


def test_utf8_text_decodes():
    assert text.decode("Grüße aus Köln, 東京".encode()) == "Grüße aus Köln, 東京"


def test_a_utf8_byte_order_mark_is_dropped():
    assert text.decode(codecs.BOM_UTF8 + "Über".encode()) == "Über"


def test_utf16_with_a_byte_order_mark_decodes():
    assert text.decode("Grüße".encode("utf-16")) == "Grüße"


def test_windows_1252_bytes_fall_back_without_raising():
    assert text.decode(b"Gr\xfc\xdfe \x80 5") == "Grüße € 5"


def test_bytes_undefined_in_windows_1252_never_raise():
    decoded = text.decode(b"caf\xe9 \x81\x8d\x8f\x90\x9d")
    assert decoded.startswith("café ")


def test_a_text_file_is_one_passage_with_unix_newlines(tmp_path):
    path = tmp_path / "notes.md"
    path.write_bytes(b"# Notes\r\nFirst line\r\nSecond line\r\n")

    passages, page_count, reader, _, _ = load_passages("text", path)

    assert page_count is None
    assert reader == "text file (utf-8)"
    assert [(passage.text, passage.page) for passage in passages] == [
        ("# Notes\nFirst line\nSecond line\n", None)
    ]


def test_a_whitespace_only_text_file_fails(tmp_path):
    path = tmp_path / "blank.txt"
    path.write_bytes(b" \r\n\t\n")

    with pytest.raises(LoaderError, match="empty"):
        load_passages("text", path)


def test_pdf_bytes_are_a_pdf_whatever_the_name():
    assert detect_kind("report.txt", b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n") == "pdf"


def test_text_is_recognised_by_suffix_or_by_content():
    assert detect_kind("README.md", b"# Title") == "text"
    assert detect_kind("notes", "Plain words, Grüße.\n".encode()) == "text"


def test_a_binary_blob_is_rejected_with_a_message():
    zip_head = b"PK\x03\x04\x14\x00\x00\x00\x08\x00" + bytes(range(256))

    with pytest.raises(LoaderError) as failure:
        detect_kind("archive.zip", zip_head)

    assert "archive.zip" in str(failure.value)
    assert "upload a PDF, a Word, PowerPoint or Excel file" in str(failure.value)


def test_an_unknown_kind_has_no_loader(tmp_path):
    with pytest.raises(LoaderError, match="no loader"):
        load_passages("spreadsheet", tmp_path / "table.xlsx")
