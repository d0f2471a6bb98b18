from django.urls import reverse

from library.models import Source
from notebooks.tests.factories import make_source


def test_sources_partial_polls_while_a_source_is_processing(client, owner, notebook):
    source = make_source(owner=owner, notebook=notebook)
    Source.objects.filter(pk=source.pk).update(
        status=Source.Status.PROCESSING, progress_done=3, progress_total=10
    )
    client.force_login(owner)

    response = client.get(reverse("notebooks:sources", args=[notebook.pk]))

    assert "embedding 3/10 chunks" in response.text
    assert 'hx-trigger="every 2s"' in response.text


def test_sources_partial_stops_polling_when_all_are_finished(client, owner, notebook):
    make_source(owner=owner, notebook=notebook, title="Done")
    failed = make_source(owner=owner, notebook=notebook, title="Broken")
    Source.objects.filter(pk=failed.pk).update(
        status=Source.Status.FAILED, error="The PDF is encrypted."
    )
    client.force_login(owner)

    response = client.get(reverse("notebooks:sources", args=[notebook.pk]))

    assert "The PDF is encrypted." in response.text
    assert "1 chunk" in response.text
    assert "every 2s" not in response.text


def test_a_ready_source_says_which_reader_made_its_text(client, notebook):
    from notebooks.models import NotebookSource

    source = Source.objects.create(
        owner=notebook.owner,
        kind="text",
        title="notes",
        filename="notes.txt",
        sha256="f" * 64,
        status="ready",
        chunk_count=1,
        reader="text file (utf-8)",
    )
    NotebookSource.objects.create(notebook=notebook, source=source)
    client.force_login(notebook.owner)

    response = client.get(reverse("notebooks:sources", args=[notebook.pk]))

    assert "text file (utf-8)" in response.content.decode()


def processing(notebook, **fields) -> Source:
    from notebooks.models import NotebookSource

    source = Source.objects.create(
        owner=notebook.owner,
        kind=fields.pop("kind", "pdf"),
        title="report",
        filename="report.pdf",
        sha256="e" * 64,
        status="processing",
        **fields,
    )
    NotebookSource.objects.create(notebook=notebook, source=source)
    return source


def test_a_pdf_being_read_shows_the_page_and_a_progress_bar(client, notebook):
    processing(notebook, stage="reading", progress_done=2, progress_total=4)
    client.force_login(notebook.owner)

    response = client.get(reverse("notebooks:sources", args=[notebook.pk]))

    assert "reading page 2 of 4" in response.text
    assert "with the vision model" not in response.text
    assert '<progress class="source-progress" max="4" value="2">' in response.text
    assert 'hx-trigger="every 2s"' in response.text


def test_pages_read_as_images_name_the_vision_model(client, notebook):
    processing(
        notebook,
        stage="reading_images",
        progress_done=3,
        progress_total=40,
        reader="vision model gpt-4o-mini",
    )
    client.force_login(notebook.owner)

    response = client.get(reverse("notebooks:sources", args=[notebook.pk]))

    assert "reading page 3 of 40 with the vision model gpt-4o-mini" in response.text


def test_pages_read_by_the_local_ocr_say_so(client, notebook):
    processing(
        notebook, stage="reading_images", progress_done=3, progress_total=40, reader="rapidocr"
    )
    client.force_login(notebook.owner)

    response = client.get(reverse("notebooks:sources", args=[notebook.pk]))

    assert "reading page 3 of 40 with the local OCR (rapidocr)" in response.text
    assert "vision model" not in response.text


def test_a_recording_being_transcribed_says_so(client, notebook):
    processing(notebook, kind="audio", stage="transcribing")
    client.force_login(notebook.owner)

    response = client.get(reverse("notebooks:sources", args=[notebook.pk]))

    assert "transcribing the recording…" in response.text
    assert "<progress" not in response.text


def test_a_ready_source_keeps_polling_while_its_summary_is_written(client, notebook):
    source = processing(notebook, stage="summarizing")
    Source.objects.filter(pk=source.pk).update(status="ready")
    client.force_login(notebook.owner)

    response = client.get(reverse("notebooks:sources", args=[notebook.pk]))

    assert "writing the summary…" in response.text
    assert 'hx-trigger="every 2s"' in response.text
