"""Word, PowerPoint, Excel, OpenDocument, EPUB, RTF, HTML and CSV files are sources of kind
"document", shown so in the sources list; rows stored as "text" before that kind existed
are migrated, and read again as documents."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.urls import reverse

from ingest.loaders import load_passages
from ingest.services import process_source
from ingest.tests import office_files
from library.models import Source


def _report(tmp_path):
    body = office_files.paragraph("Finances", "Heading1") + office_files.paragraph(
        "Revenue grew by four percent in the year under review."
    )
    return office_files.docx(tmp_path / "report.docx", body).read_bytes()


def test_a_word_file_is_a_document_named_so_in_the_sources_list(
    fake_openai, client, owner, notebook, add_ready_source, tmp_path
):
    source = add_ready_source(notebook, _report(tmp_path), "report.docx")

    assert source.kind == Source.Kind.DOCUMENT
    assert source.reader == "Word document"
    client.force_login(owner)
    page = client.get(reverse("notebooks:detail", args=[notebook.pk])).text
    assert '<span class="kind">Document</span>' in page


def test_a_csv_file_is_a_document_and_a_text_file_stays_text(
    fake_openai, notebook, add_ready_source
):
    table = add_ready_source(notebook, b"year,otters\n2021,12\n2022,15\n", "otters.csv")
    notes = add_ready_source(notebook, b"Sea otters hold hands.", "otters.txt")

    assert (table.kind, table.reader) == (Source.Kind.DOCUMENT, "CSV table")
    assert notes.kind == Source.Kind.TEXT


def test_a_file_named_html_that_holds_no_tag_is_read_as_the_text_it_is(
    fake_openai, notebook, add_ready_source
):
    source = add_ready_source(notebook, b"Sea otters hold hands while they sleep.", "otters.html")

    assert source.kind == Source.Kind.TEXT
    assert "Sea otters hold hands" in source.chunks.get().text


def test_a_word_file_stored_as_text_is_read_again_as_a_document(
    fake_openai, notebook, add_ready_source, tmp_path
):
    path = tmp_path / "report.docx"
    path.write_bytes(_report(tmp_path))
    assert load_passages("text", path).kind == "document"

    source = add_ready_source(notebook, path.read_bytes(), "report.docx")
    Source.objects.filter(pk=source.pk).update(kind=Source.Kind.TEXT, status=Source.Status.QUEUED)

    again = process_source(source_id=source.pk)

    assert (again.status, again.kind) == (Source.Status.READY, Source.Kind.DOCUMENT)
    assert any("four percent" in chunk.text for chunk in again.chunks.all())


@pytest.mark.django_db(transaction=True)
def test_documents_stored_as_text_before_the_kind_existed_are_migrated_to_it(
    fake_openai, notebook, add_ready_source, tmp_path
):
    document = add_ready_source(notebook, _report(tmp_path), "report.docx")
    notes = add_ready_source(notebook, b"Sea otters hold hands.", "otters.txt")
    try:
        call_command("migrate", "library", "0022", verbosity=0)
        document.refresh_from_db()
        assert document.kind == "text"  # as the code before the kind stored it
    finally:
        call_command("migrate", "library", verbosity=0)

    document.refresh_from_db()
    notes.refresh_from_db()
    assert (document.kind, notes.kind) == (Source.Kind.DOCUMENT, Source.Kind.TEXT)
