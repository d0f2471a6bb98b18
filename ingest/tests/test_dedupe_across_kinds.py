"""The same bytes are one source, whether they were uploaded or fetched from the web."""

import json
from io import StringIO

import pytest
from django.core.files.base import ContentFile
from django.core.management import call_command

from ingest.services import add_source, add_url, process_source
from ingest.tests.web_site import FOUR_PAGES_PDF, NOTES
from library.models import Chunk, Source
from notebooks.models import Notebook


@pytest.fixture
def second_notebook(owner):
    return Notebook.objects.create(owner=owner, title="Second")


def test_a_web_page_with_the_bytes_of_an_upload_links_the_upload(
    fake_openai, notebook, second_notebook, add_ready_source, web, loopback_allowed, media_root
):
    uploaded = add_ready_source(notebook, FOUR_PAGES_PDF, name="report.pdf")
    chunks, embedding_calls = Chunk.objects.count(), len(fake_openai.embedding_requests)
    web_source = add_url(owner=notebook.owner, notebook=second_notebook, url=f"{web.base}/report")

    result = process_source(source_id=web_source.source.pk)

    assert result.pk == uploaded.pk
    assert not Source.objects.filter(pk=web_source.source.pk).exists()
    assert list(second_notebook.sources.all()) == [uploaded]
    assert list(notebook.sources.all()) == [uploaded]
    uploaded.refresh_from_db()
    assert uploaded.url == f"{web.base}/report"  # where it was also found
    assert (uploaded.status, uploaded.kind) == (Source.Status.READY, Source.Kind.PDF)
    # Nothing stored or embedded twice.
    assert Chunk.objects.count() == chunks
    assert len(fake_openai.embedding_requests) == embedding_calls
    assert [path.name for path in media_root.rglob("*") if path.is_file()] == ["report.pdf"]


def test_an_upload_with_the_bytes_of_a_fetched_page_links_the_page(
    fake_openai, notebook, second_notebook, web, loopback_allowed
):
    page = add_url(owner=notebook.owner, notebook=notebook, url=f"{web.base}/notes.txt").source
    page = process_source(source_id=page.pk)
    assert page.status == Source.Status.READY
    embedding_calls = len(fake_openai.embedding_requests)

    added = add_source(
        owner=notebook.owner, notebook=second_notebook, upload=ContentFile(NOTES, name="n.txt")
    )

    assert not added.created
    assert added.source.pk == page.pk
    assert Source.objects.count() == 1
    assert list(second_notebook.sources.all()) == [page]
    assert len(fake_openai.embedding_requests) == embedding_calls


def test_a_failed_upload_is_read_again_when_its_bytes_come_from_the_web(
    fake_openai, notebook, web, loopback_allowed
):
    upload = ContentFile(FOUR_PAGES_PDF, name="report.pdf")
    uploaded = add_source(owner=notebook.owner, notebook=notebook, upload=upload).source
    Source.objects.filter(pk=uploaded.pk).update(status=Source.Status.FAILED, error="down")
    web_source = add_url(owner=notebook.owner, notebook=notebook, url=f"{web.base}/report").source

    process_source(source_id=web_source.pk)

    uploaded.refresh_from_db()
    assert (uploaded.status, uploaded.error) == (Source.Status.QUEUED, "")
    assert list(notebook.sources.all()) == [uploaded]


def test_another_owners_upload_is_never_linked(
    fake_openai, owner, outsider, notebook, add_ready_source, web, loopback_allowed
):
    theirs = add_ready_source(
        Notebook.objects.create(owner=outsider, title="Theirs"), FOUR_PAGES_PDF, "report.pdf"
    )
    web_source = add_url(owner=owner, notebook=notebook, url=f"{web.base}/report").source

    mine = process_source(source_id=web_source.pk)

    assert mine.pk == web_source.pk != theirs.pk
    assert (mine.owner, mine.kind, mine.status) == (owner, Source.Kind.URL, Source.Status.READY)
    assert list(notebook.sources.all()) == [mine]


@pytest.mark.django_db(transaction=True)
def test_the_ingest_command_reports_the_linked_source_for_such_a_page(
    fake_openai, tmp_path, web, loopback_allowed
):
    pdf = tmp_path / "report.pdf"
    pdf.write_bytes(FOUR_PAGES_PDF)
    out = StringIO()
    call_command("ingest", str(pdf), "--user", "u", "--notebook", "N", "--json", stdout=out)
    [uploaded] = [json.loads(line) for line in out.getvalue().splitlines()]

    out = StringIO()
    call_command(
        "ingest", f"{web.base}/report", "--user", "u", "--notebook", "N", "--json", stdout=out,
        stderr=StringIO(),
    )  # fmt: skip
    [linked] = [json.loads(line) for line in out.getvalue().splitlines()]

    assert linked["name"] == f"{web.base}/report"
    assert linked["source_id"] == uploaded["source_id"]
    assert (linked["kind"], linked["status"], linked["error"]) == ("pdf", "ready", "")
    assert linked["chunks"] == uploaded["chunks"] > 0
    assert Source.objects.count() == 1
