"""What the worker stores (a source's error and reader, a document's error) and the
starting credit's reason are shown in German to a German reader and in English otherwise;
the stored text, which the command line prints, stays English."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.conf import settings
from django.core.files import File
from django.core.management import call_command
from django.urls import reverse

from generation.documents.services import generate_document
from generation.models import GeneratedDocument
from ingest.services import add_source
from ingest.tests.data import PDFS
from library.models import Source
from notebooks.models import NotebookSource
from ops.worker import drain_queue

LOCKED = PDFS / "pypdf/r2-user-password.pdf"
FOUR_PAGES = PDFS / "sample-files/pdflatex-4-pages.pdf"
LOCKED_EN = "This PDF is protected by a password. Upload a copy without password protection"
LOCKED_DE = "Dieses PDF ist durch ein Passwort geschützt. Laden Sie eine Kopie ohne Passwortschutz"


def add_file(owner, notebook, path) -> Source:
    with open(path, "rb") as handle:
        return add_source(owner=owner, notebook=notebook, upload=File(handle)).source


@pytest.mark.django_db(transaction=True)
def test_a_source_the_worker_failed_and_one_it_read_speak_the_readers_language(
    fake_openai, client, owner, notebook
):
    locked = add_file(owner, notebook, LOCKED)
    readable = add_file(owner, notebook, FOUR_PAGES)

    drain_queue()  # a real worker, as in production

    locked.refresh_from_db()
    readable.refresh_from_db()
    assert locked.status == Source.Status.FAILED
    assert locked.error.startswith(LOCKED_EN)  # stored in English
    assert readable.status == Source.Status.READY
    assert readable.reader == "PDF text layer"
    client.force_login(owner)
    page = reverse("notebooks:detail", args=[notebook.pk])

    german = client.get(page, HTTP_ACCEPT_LANGUAGE="de").content.decode()
    english = client.get(page, HTTP_ACCEPT_LANGUAGE="en").content.decode()

    assert LOCKED_DE in german and LOCKED_EN not in german
    assert "· PDF-Textebene" in german and "PDF text layer" not in german
    assert LOCKED_EN in english and LOCKED_DE not in english
    assert "· PDF text layer" in english

    # The language cookie (the switcher) chooses as the browser's header does.
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "de"
    assert LOCKED_DE in client.get(page, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    library = client.get(reverse("library:library")).content.decode()
    assert LOCKED_DE in library and LOCKED_EN not in library


@pytest.mark.django_db(transaction=True)
def test_the_ingest_command_prints_the_english_error_whatever_the_language(
    fake_openai, owner, notebook
):
    out = StringIO()
    with pytest.raises(SystemExit):  # exit status 1: a source failed
        call_command(
            "ingest",
            str(LOCKED),
            user=owner.username,
            notebook=notebook.title,
            json=True,
            stdout=out,
        )

    result = json.loads(out.getvalue().strip().splitlines()[-1])
    assert result["status"] == "failed"
    assert result["error"].startswith(LOCKED_EN)


@pytest.mark.django_db
def test_a_source_failed_before_texts_had_msgids_shows_its_error_as_stored(client, owner, notebook):
    old = Source.objects.create(
        owner=owner,
        kind="pdf",
        title="old",
        filename="old.pdf",
        sha256="e" * 64,
        status=Source.Status.FAILED,
        error="The PDF is encrypted.",
        reader="pypdf text layer",
    )
    NotebookSource.objects.create(notebook=notebook, source=old)
    client.force_login(owner)

    german = client.get(
        reverse("notebooks:detail", args=[notebook.pk]), HTTP_ACCEPT_LANGUAGE="de"
    ).content.decode()

    assert "The PDF is encrypted." in german


@pytest.mark.django_db
def test_a_document_that_failed_shows_why_in_the_readers_language(client, owner, notebook):
    document = GeneratedDocument.objects.create(notebook=notebook, owner=owner, kind="report")

    generate_document(document_id=document.pk)  # the worker's part; no sources to read

    document.refresh_from_db()
    assert document.status == GeneratedDocument.Status.FAILED
    assert document.error.startswith("This notebook has no ready sources to generate from")
    client.force_login(owner)
    page = reverse("studio:document", args=[notebook.pk, document.pk])
    german = client.get(page, HTTP_ACCEPT_LANGUAGE="de").content.decode()
    english = client.get(page, HTTP_ACCEPT_LANGUAGE="en").content.decode()

    assert "Dieses Notizbuch hat keine fertigen Quellen" in german
    assert "This notebook has no ready sources" in english


@pytest.mark.django_db
def test_the_starting_credit_is_named_in_the_readers_language(client, owner):
    client.force_login(owner)

    german = client.get(reverse("billing:usage"), HTTP_ACCEPT_LANGUAGE="de").content.decode()
    english = client.get(reverse("billing:usage"), HTTP_ACCEPT_LANGUAGE="en").content.decode()

    assert "<td>Startguthaben</td>" in german and "Starting credit" not in german
    assert "<td>Starting credit</td>" in english
    assert owner.credit_entries.get().reason == "Starting credit"


@pytest.mark.django_db
def test_a_chat_model_failing_is_explained_in_the_readers_language(
    fake_openai, add_ready_source, client, owner, notebook
):
    add_ready_source(notebook, b"Otters hold hands while they sleep so they do not drift apart.")
    fake_openai.fail_next("500", times=5, endpoint="completions")
    client.force_login(owner)

    response = client.post(
        reverse("notebooks:ask", args=[notebook.pk]),
        {"question": "What do otters do?"},
        headers={"HX-Request": "true", "Accept-Language": "de"},
    )

    assert response.status_code == 200
    assert "Das Chat-Modell unter http://127.0.0.1:" in response.text
    assert "hat mit einem Fehler geantwortet (HTTP 500)." in response.text


@pytest.mark.django_db
def test_the_kind_of_a_model_call_is_named_in_the_readers_language(client, owner):
    from billing.services import record_usage

    record_usage(user=owner, kind="stt", model="local/whisper-base", seconds=3.0)
    client.force_login(owner)

    german = client.get(reverse("billing:usage"), HTTP_ACCEPT_LANGUAGE="de").content.decode()
    english = client.get(reverse("billing:usage"), HTTP_ACCEPT_LANGUAGE="en").content.decode()

    assert "<td>Spracherkennung</td>" in german
    assert "<td>Speech to text</td>" in english
