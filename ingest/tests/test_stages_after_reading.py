"""After a source's last page, each phase (its words indexed, the summary, the guide, the
vectors) has a stage of its own, shown by the sources list, `ingest`'s progress and the
API: the progress never sits on "reading page 261 of 261" while the rest is done."""

from django.core.files.base import ContentFile
from django.urls import reverse

from api.tokens import create_token
from ingest.services import add_source, process_source
from ingest.tests.data import PDFS
from ingest.waiting import source_progress
from library.models import Source

FOUR_PAGES = PDFS / "sample-files/pdflatex-4-pages.pdf"


def record_stages(monkeypatch) -> list[tuple[str, str]]:
    """(status, stage) as the row reads after every write of its stage, without repeats."""
    seen: list[tuple[str, str]] = []

    def remember(source):
        row = Source.objects.values_list("status", "stage").get(pk=source.pk)
        if not seen or seen[-1] != row:
            seen.append(row)

    report, save = Source.report_progress, Source.save

    def reporting(source, **progress):
        report(source, **progress)
        remember(source)

    def saving(source, *args, **kwargs):
        save(source, *args, **kwargs)
        if source.pk is not None:
            remember(source)

    monkeypatch.setattr(Source, "report_progress", reporting)
    monkeypatch.setattr(Source, "save", saving)
    return seen


def test_each_phase_after_the_last_page_has_its_own_stage(fake_openai, notebook, monkeypatch):
    upload = ContentFile(FOUR_PAGES.read_bytes(), name=FOUR_PAGES.name)
    source = add_source(
        owner=notebook.owner, notebook=notebook, upload=upload, pdf_capture="text"
    ).source
    seen = record_stages(monkeypatch)

    source = process_source(source_id=source.pk)

    assert source.is_finished
    after_reading = seen[seen.index(("processing", "reading")) + 1 :]
    assert after_reading == [
        ("processing", "indexing"),
        ("ready", "summarizing"),
        ("ready", "writing_guide"),
        ("ready", "embedding"),
    ]
    assert Source.objects.get(pk=source.pk).stage == ""


def test_a_ready_source_writing_its_guide_is_not_finished(notebook):
    source = Source(status=Source.Status.READY, stage=Source.Stage.WRITING_GUIDE)
    assert not source.is_finished
    source.stage = Source.Stage.NONE
    assert source.is_finished


def shown(client, notebook, **fields) -> str:
    from notebooks.models import NotebookSource

    source = Source.objects.create(
        owner=notebook.owner,
        kind="pdf",
        title="manual",
        filename="manual.pdf",
        sha256="e" * 64,
        chunk_count=610,
        page_count=261,
        **fields,
    )
    NotebookSource.objects.get_or_create(notebook=notebook, source=source)
    client.force_login(notebook.owner)
    return client.get(reverse("notebooks:sources", args=[notebook.pk])).text


def test_the_sources_list_says_the_words_are_indexed_after_the_last_page(client, notebook):
    text = shown(
        client, notebook, status="processing", stage="indexing", progress_done=0, progress_total=0
    )

    assert "read; indexing its words…" in text
    assert "reading page" not in text
    assert 'hx-trigger="every 2s"' in text


def test_the_sources_list_says_the_guide_is_being_written(client, notebook):
    text = shown(client, notebook, status="ready", stage="writing_guide")

    assert "writing the guide…" in text
    assert 'hx-trigger="every 2s"' in text


def test_the_sources_list_says_pages_are_read_as_images(client, notebook):
    text = shown(
        client,
        notebook,
        status="processing",
        stage="reading_images",
        progress_done=260,
        progress_total=261,
        reader="rapidocr",
    )

    assert "reading page 260 of 261 with the local OCR (rapidocr)" in text


def test_ingest_progress_names_each_stage_after_reading():
    source = Source(status=Source.Status.PROCESSING, stage=Source.Stage.INDEXING)
    assert source_progress(source) == "processing: indexing its words"
    source.status, source.stage = Source.Status.READY, Source.Stage.SUMMARIZING
    assert source_progress(source) == "ready, searchable by its words: writing the summary"
    source.stage = Source.Stage.WRITING_GUIDE
    assert source_progress(source) == "ready, searchable by its words: writing the guide"
    source.stage, source.progress_done, source.progress_total = Source.Stage.EMBEDDING, 5, 610
    assert source_progress(source) == "ready, searchable by its words: embedded 5/610 chunks"
    source.stage = Source.Stage.NONE
    assert source_progress(source) == "ready"


def test_the_api_names_the_stage_in_the_requests_language(client, notebook):
    from notebooks.models import NotebookSource

    source = Source.objects.create(
        owner=notebook.owner,
        kind="pdf",
        title="manual",
        filename="manual.pdf",
        sha256="d" * 64,
        status="ready",
        stage="writing_guide",
    )
    NotebookSource.objects.create(notebook=notebook, source=source)
    token = create_token(user=notebook.owner, name="script", scope="read").secret
    url = f"/api/v1/notebooks/{notebook.pk}/sources/{source.pk}"
    auth = {"Authorization": f"Bearer {token}"}

    english = client.get(url, headers=auth).json()
    german = client.get(url, headers={**auth, "Accept-Language": "de"}).json()

    assert (english["status"], english["stage"]) == ("ready", "writing_guide")
    assert english["stage_label"] == "Writing the guide"
    assert german["stage_label"] != english["stage_label"]
    assert german["stage_label"]
