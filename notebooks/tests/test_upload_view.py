from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from ingest.tests import office_files
from library.models import Source


def _upload(client, notebook, *files):
    url = reverse("notebooks:upload", args=[notebook.pk])
    return client.post(url, {"files": list(files)}, headers={"HX-Request": "true"})


def _text_file(content=b"Sea otters hold hands while they sleep."):
    return SimpleUploadedFile("otters.txt", content, content_type="text/plain")


def test_uploaded_text_file_is_queued_in_the_notebook(client, owner, notebook):
    client.force_login(owner)

    response = _upload(client, notebook, _text_file())

    source = Source.objects.get(owner=owner)
    assert source.status == Source.Status.QUEUED
    assert list(notebook.sources.all()) == [source]
    assert response.status_code == 200
    assert "otters" in response.text
    assert "Queued" in response.text
    assert 'hx-trigger="every 2s"' in response.text


def test_a_word_document_is_queued_like_any_other_file(client, owner, notebook, tmp_path):
    client.force_login(owner)
    path = office_files.docx(tmp_path / "otters.docx", office_files.paragraph("Sea otters."))
    upload = SimpleUploadedFile("otters.docx", path.read_bytes())

    _upload(client, notebook, upload)

    source = Source.objects.get(owner=owner)
    assert (source.kind, source.status) == (Source.Kind.DOCUMENT, Source.Status.QUEUED)


def test_unsupported_binary_shows_the_reason(client, owner, notebook):
    client.force_login(owner)
    binary = SimpleUploadedFile("photo.bin", bytes(range(256)) * 8)

    response = _upload(client, notebook, binary)

    assert response.status_code == 200
    assert "is not a file Loupe can read yet" in response.text
    assert not Source.objects.exists()


def test_same_file_again_says_it_is_already_in_the_library(client, owner, notebook):
    client.force_login(owner)
    _upload(client, notebook, _text_file())

    response = _upload(client, notebook, _text_file())

    assert "already in your library" in response.text
    assert Source.objects.count() == 1


def test_upload_without_htmx_redirects_to_the_notebook(client, owner, notebook):
    client.force_login(owner)
    url = reverse("notebooks:upload", args=[notebook.pk])

    response = client.post(url, {"files": [_text_file()]})

    assert response.status_code == 302
    assert response.url == reverse("notebooks:detail", args=[notebook.pk])
    assert notebook.sources.count() == 1
