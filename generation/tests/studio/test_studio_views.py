"""The studio in the browser: the panel on the notebook page, making, showing, checking,
downloading, retrying and deleting documents; nobody else's; nothing without credit."""

import csv
import io

import pytest
from django.urls import reverse
from procrastinate.contrib.django.models import ProcrastinateJob

from billing.models import CreditEntry
from generation.documents.models import GeneratedDocument
from generation.tests.studio.conftest import reply
from library.models import Source

TABLE = {
    "title": "Figures",
    "columns": ["What", "Value"],
    "rows": [
        {"cells": ["Heron height", "95 cm"], "source": "[1]"},
        {"cells": ["Passengers, 2019", "1.4 million"], "source": "[3]"},
    ],
}


@pytest.fixture
def table(fake_openai, studio_sources, make_document):
    fake_openai.chat_replies.append(reply(TABLE))
    document = make_document("table")
    assert document.status == GeneratedDocument.Status.READY, document.error
    return document


def test_the_notebook_page_shows_the_studio_panel_with_its_documents(
    client, owner, notebook, table
):
    client.force_login(owner)

    page = client.get(reverse("notebooks:detail", args=[notebook.pk])).content.decode()

    assert 'id="studio-heading"' in page
    assert reverse("studio:create", args=[notebook.pk]) in page
    assert reverse("studio:document", args=[notebook.pk, table.pk]) in page
    assert f"?about={table.source_id}" in page  # "Ask about this"


def test_generating_queues_one_job_on_the_generate_queue(client, owner, notebook):
    client.force_login(owner)

    response = client.post(
        reverse("studio:create", args=[notebook.pk]), {"kind": "report", "language": "de"}
    )

    assert response.status_code == 302
    document = GeneratedDocument.objects.get()
    assert (document.kind, document.requested_language, document.status) == (
        "report",
        "de",
        "queued",
    )
    job = ProcrastinateJob.objects.get(task_name="generation.tasks.generate_document")
    assert job.queue_name == "generate"
    assert job.args == {"document_id": document.pk}


def test_an_unknown_kind_is_refused_with_a_message(client, owner, notebook):
    client.force_login(owner)

    response = client.post(
        reverse("studio:create", args=[notebook.pk]), {"kind": "poem"}, HTTP_HX_REQUEST="true"
    )

    assert "Unknown kind of document" in response.content.decode()
    assert not GeneratedDocument.objects.exists()


def test_the_panel_polls_while_a_document_is_being_made(client, owner, notebook):
    client.force_login(owner)
    client.post(reverse("studio:create", args=[notebook.pk]), {"kind": "report"})

    panel = client.get(reverse("studio:panel", args=[notebook.pk])).content.decode()

    assert 'hx-trigger="every 2s"' in panel
    assert "waiting for a worker" in panel


def test_a_table_is_shown_as_html_with_citation_links_and_downloads_as_csv(
    client, owner, notebook, table
):
    client.force_login(owner)

    page = client.get(reverse("studio:document", args=[notebook.pk, table.pk])).content.decode()
    download = client.get(reverse("studio:csv", args=[notebook.pk, table.pk]))

    assert "<td>95 cm</td>" in page
    first = table.citations.get(n=1)
    assert reverse("studio:citation", args=[notebook.pk, table.pk, first.pk]) in page
    assert download["Content-Type"].startswith("text/csv")
    assert 'filename="figures.csv"' in download["Content-Disposition"]
    rows = list(csv.reader(io.StringIO(download.content.decode())))
    assert rows[0] == ["What", "Value", "Source"]
    assert rows[1][:2] == ["Heron height", "95 cm"]
    assert rows[1][2] == f"[1] {first.source_title}"


def test_a_document_citation_opens_its_passage_like_an_answers(client, owner, notebook, table):
    client.force_login(owner)
    cited = table.citations.get(n=1)

    panel = client.get(
        reverse("studio:citation", args=[notebook.pk, table.pk, cited.pk]), HTTP_HX_REQUEST="true"
    ).content.decode()

    assert f"[1] {cited.source_title}" in panel
    assert "<mark>" in panel and cited.quote.split("\n")[0] in panel


def test_deleting_a_document_removes_its_searchable_source(client, owner, notebook, table):
    client.force_login(owner)
    source_id = table.source_id

    response = client.post(reverse("studio:delete", args=[notebook.pk, table.pk]))

    assert response.status_code == 302
    assert not GeneratedDocument.objects.exists()
    assert not Source.objects.filter(pk=source_id).exists()


def test_a_failed_document_can_be_retried(
    client, fake_openai, owner, notebook, studio_sources, make_document
):
    fake_openai.chat_replies += ["nope", "still nope"]
    failed = make_document("table")
    assert failed.status == GeneratedDocument.Status.FAILED
    client.force_login(owner)
    jobs = ProcrastinateJob.objects.filter(args={"document_id": failed.pk})
    before = jobs.count()  # make_document ran the first job's work itself

    client.post(reverse("studio:retry", args=[notebook.pk, failed.pk]))

    failed.refresh_from_db()
    assert (failed.status, failed.error) == ("queued", "")
    assert jobs.count() == before + 1


def test_generating_without_credit_is_refused_with_402(client, owner, notebook):
    CreditEntry.objects.create(user=owner, kind=CreditEntry.Kind.GRANT, amount=-1000)
    client.force_login(owner)

    response = client.post(reverse("studio:create", args=[notebook.pk]), {"kind": "report"})

    assert response.status_code == 402
    assert not GeneratedDocument.objects.exists()


def test_the_worker_fails_a_document_whose_owner_ran_out_of_credit_meanwhile(
    fake_openai, owner, notebook, studio_sources
):
    from generation.documents.services import generate_document, request_document

    document = request_document(user=owner, notebook=notebook, kind="report")
    CreditEntry.objects.create(user=owner, kind=CreditEntry.Kind.GRANT, amount=-1000)

    generate_document(document_id=document.pk)

    document.refresh_from_db()
    assert document.status == GeneratedDocument.Status.FAILED
    assert "credit is spent" in document.error
    assert not fake_openai.chat_requests


def _urls(notebook_id, document_id, citation_id):
    return [
        ("get", reverse("studio:panel", args=[notebook_id])),
        ("post", reverse("studio:create", args=[notebook_id])),
        ("get", reverse("studio:document", args=[notebook_id, document_id])),
        ("post", reverse("studio:retry", args=[notebook_id, document_id])),
        ("post", reverse("studio:delete", args=[notebook_id, document_id])),
        ("get", reverse("studio:csv", args=[notebook_id, document_id])),
        ("get", reverse("studio:svg", args=[notebook_id, document_id])),
        ("get", reverse("studio:audio", args=[notebook_id, document_id])),
        ("post", reverse("studio:quiz_answer", args=[notebook_id, document_id, 1])),
        ("get", reverse("studio:citation", args=[notebook_id, document_id, citation_id])),
    ]


def test_every_studio_view_is_404_for_someone_else(client, outsider, notebook, table):
    client.force_login(outsider)
    cited = table.citations.first()

    for method, url in _urls(notebook.pk, table.pk, cited.pk):
        response = getattr(client, method)(url, {"kind": "report"} if method == "post" else {})
        assert response.status_code == 404, url
    assert GeneratedDocument.objects.count() == 1


def test_a_document_of_another_notebook_is_404_even_for_its_owner(client, owner, notebook, table):
    from notebooks.models import Notebook

    other = Notebook.objects.create(owner=owner, title="Other")
    client.force_login(owner)

    for method, url in _urls(other.pk, table.pk, table.citations.first().pk)[2:]:
        assert getattr(client, method)(url).status_code == 404, url
