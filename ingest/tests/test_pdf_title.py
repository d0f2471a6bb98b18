"""A PDF source is titled by its metadata when that is a real title, else by its file name
(ingest/loaders/pdf_title.py)."""

import pytest
from django.core.files.base import ContentFile

from ingest.loaders.pdf_text_layer import read_text_layer
from ingest.loaders.pdf_title import title_from_metadata
from ingest.services import add_source, process_source
from ingest.tests.data import PDFS, SHARED_DATA

MANUALS = SHARED_DATA / "manual-qa"

# Every PDF in ../shared/data whose metadata has a /Title, and what a person sees as its
# source's title. The others (49 of 68: no /Title, or PDFium cannot open them) keep their
# file names.
TITLES_IN_THE_SHARED_PDFS = [
    (MANUALS / "debian-reference.en.pdf", "Debian Reference"),
    (MANUALS / "debian-reference.de.pdf", "Debian-Referenz"),
    (PDFS / "sample-files/GeoTopo-komprimiert.pdf", "Geometrie und Topologie"),
    (PDFS / "sample-files/annotated_pdf.pdf", "Annotated PDF"),
    (PDFS / "sample-files/google-doc-document.pdf", "PDF Example Document"),
    (PDFS / "pypdf/example.pdf", "PDF Example Document"),
    # Refused: a placeholder, a file name, the program's name before a file name, garbled.
    (PDFS / "pypdf/AutoCad_Diagram.pdf", ""),  # "Model"
    (PDFS / "pypdf/issue-301.pdf", ""),  # "Title"
    (PDFS / "pypdf/two-different-pages.pdf", ""),  # "Untitled document"
    (PDFS / "sample-files/inline-image.pdf", ""),  # "untitled"
    (PDFS / "pypdf/Seige_of_Vicksburg_Sample_OCR.pdf", ""),  # "Binder1.pdf"
    (PDFS / "pypdf/test Orient.pdf", ""),  # "Microsoft Word - Test Orient PDF.docx"
    (PDFS / "pypdf/bytes.pdf", ""),  # "Microsoft Word - ã…‹ã…©ã…³ã‡¹…Final.docx"
    (PDFS / "sample-files/habibi.pdf", ""),  # "habibi"
    (PDFS / "sample-files/habibi-oneline-cmap.pdf", ""),  # "habibi"
    (PDFS / "sample-files/imagemagick-lzw.pdf", ""),  # "imagemagick-lzw\x00"
    (PDFS / "sample-files/imagemagick-images.pdf", ""),  # "imagemagick-images\x00"
    (PDFS / "sample-files/imagemagick-ASCII85Decode.pdf", ""),
    (PDFS / "sample-files/imagemagick-CCITTFaxDecode.pdf", ""),
    (PDFS / "sample-files/pdflatex-4-pages.pdf", ""),  # no /Title at all
]


@pytest.mark.parametrize(
    ("path", "title"), TITLES_IN_THE_SHARED_PDFS, ids=lambda value: getattr(value, "name", None)
)
def test_the_metadata_title_of_each_shared_pdf_is_kept_only_when_real(path, title):
    assert read_text_layer(path, with_text=False).title == title


@pytest.mark.parametrize(
    ("raw", "title"),
    [
        ("Microsoft Word - Annual Report 2020", "Annual Report 2020"),
        ("Microsoft Word - Annual Report 2020.docx", ""),
        ("  Der   Prozess\r\n", "Der Prozess"),
        ("Über die Zeit", "Über die Zeit"),
        ("Untitled-1", ""),
        ("Doc1", ""),
        ("Scan0412", ""),
        ("report_final_v2", ""),
        ("C:\\Users\\anna\\Desktop\\report", ""),
        ("/home/anna/report", ""),
        ("Go", ""),
        ("Ã©tude de cas", ""),
        ("Broken \ufffd title", ""),
        ("A" * 201, ""),
        ("", ""),
    ],
)
def test_junk_titles_are_refused_and_real_ones_made_one_line(raw, title):
    assert title_from_metadata(raw) == title


@pytest.mark.django_db
def test_a_pdf_with_a_real_title_is_shown_by_it(fake_openai, notebook):
    added = add_source(
        owner=notebook.owner,
        notebook=notebook,
        upload=ContentFile(
            (PDFS / "sample-files/annotated_pdf.pdf").read_bytes(), name="annotated_pdf.pdf"
        ),
    )
    assert added.source.title == "annotated_pdf"  # until it has been read

    source = process_source(source_id=added.source.pk)

    assert source.status == "ready", source.error
    assert source.title == "Annotated PDF"
    assert source.filename == "annotated_pdf.pdf"


@pytest.mark.django_db
def test_a_pdf_with_a_junk_title_keeps_its_file_name(fake_openai, notebook):
    added = add_source(
        owner=notebook.owner,
        notebook=notebook,
        upload=ContentFile((PDFS / "pypdf/test Orient.pdf").read_bytes(), name="test Orient.pdf"),
    )

    source = process_source(source_id=added.source.pk)

    assert source.status == "ready", source.error
    assert source.title == "test Orient"


@pytest.mark.django_db
def test_a_title_a_person_gave_stays_over_the_metadata(fake_openai, notebook):
    added = add_source(
        owner=notebook.owner,
        notebook=notebook,
        upload=ContentFile(
            (PDFS / "sample-files/annotated_pdf.pdf").read_bytes(), name="annotated_pdf.pdf"
        ),
    )
    added.source.title = "Anna's annotations"
    added.source.save(update_fields=["title"])

    source = process_source(source_id=added.source.pk)

    assert source.status == "ready", source.error
    assert source.title == "Anna's annotations"
