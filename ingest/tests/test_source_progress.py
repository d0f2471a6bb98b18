"""While a source processes, its row says the stage and how far it got."""

from django.core.files.base import ContentFile

from ingest.loaders import load_passages
from ingest.services import add_source, add_url, process_source, web_pages
from ingest.tests.data import PDFS
from library.models import Source

FOUR_PAGES = PDFS / "sample-files/pdflatex-4-pages.pdf"


def record_progress(monkeypatch) -> list[tuple[str, int, int]]:
    """Every progress write, as the row reads right after it: (stage, done, total)."""
    seen: list[tuple[str, int, int]] = []
    write = Source.report_progress

    def recording(source, **progress):
        write(source, **progress)
        row = Source.objects.get(pk=source.pk)
        seen.append((row.stage, row.progress_done, row.progress_total))

    monkeypatch.setattr(Source, "report_progress", recording)
    return seen


def test_a_pdf_shows_pages_read_up_to_its_page_count_then_embedding(
    fake_openai, owner, notebook, monkeypatch
):
    seen = record_progress(monkeypatch)
    upload = ContentFile(FOUR_PAGES.read_bytes(), name="four.pdf")
    source = add_source(owner=owner, notebook=notebook, upload=upload).source

    process_source(source_id=source.pk)

    reading = [(done, total) for stage, done, total in seen if stage == "reading"]
    embedding = [(done, total) for stage, done, total in seen if stage == "embedding"]
    stages = [stage for stage, _, _ in seen]
    assert stages.index("embedding") > max(i for i, s in enumerate(stages) if s == "reading")
    assert {total for _, total in reading} == {4}
    assert [done for done, _ in reading] == sorted(done for done, _ in reading)
    assert reading[-1] == (4, 4)
    assert embedding[0][0] == 0
    assert embedding[-1][0] == embedding[-1][1] > 0


def test_a_finished_source_has_no_stage(fake_openai, owner, notebook):
    upload = ContentFile(FOUR_PAGES.read_bytes(), name="four.pdf")
    source = add_source(owner=owner, notebook=notebook, upload=upload).source

    process_source(source_id=source.pk)

    source.refresh_from_db()
    assert source.status == Source.Status.READY
    assert source.stage == ""


def test_a_failed_source_has_no_stage(fake_openai, owner, notebook):
    fake_openai.fail_next("500", times=10, endpoint="embeddings")
    upload = ContentFile(FOUR_PAGES.read_bytes(), name="four.pdf")
    source = add_source(owner=owner, notebook=notebook, upload=upload).source

    process_source(source_id=source.pk)

    source.refresh_from_db()
    assert source.status == Source.Status.FAILED
    assert source.stage == ""


def test_pages_read_by_the_vision_model_are_reported_as_such(fake_openai, settings, db):
    settings.VISION_MODEL = "fake-vision"
    calls: list[tuple[int, int, bool]] = []

    load_passages(
        "pdf",
        FOUR_PAGES,
        pdf_capture="vision",
        on_progress=lambda done, total, by_vision: calls.append((done, total, by_vision)),
    )

    # The image stage is announced before its first page is read (its OCR or vision call
    # takes a while), then each page read is counted.
    assert calls[:5] == [(0, 4, True), (1, 4, True), (2, 4, True), (3, 4, True), (4, 4, True)]
    assert calls[-1][:2] == (4, 4)


def test_text_mode_counts_every_page_it_looked_at():
    calls: list[tuple[int, int, bool]] = []

    load_passages(
        "pdf",
        FOUR_PAGES,
        pdf_capture="text",
        on_progress=lambda done, total, by_vision: calls.append((done, total, by_vision)),
    )

    assert calls == [(1, 4, False), (2, 4, False), (3, 4, False), (4, 4, False)]


def test_a_pdf_from_the_web_is_fetched_then_read_page_by_page(
    fake_openai, owner, notebook, monkeypatch, web, loopback_allowed
):
    seen = record_progress(monkeypatch)
    fetch = web_pages.fetch
    stage_while_fetching = []

    def watched_fetch(url):
        stage_while_fetching.append(Source.objects.get(url=url).stage)
        return fetch(url)

    monkeypatch.setattr(web_pages, "fetch", watched_fetch)
    source = add_url(owner=owner, notebook=notebook, url=f"{web.base}/report").source

    process_source(source_id=source.pk)

    assert stage_while_fetching == ["fetching"]
    assert ("reading", 4, 4) in seen
    assert seen[-1][0] == "embedding"
    source.refresh_from_db()
    assert (source.status, source.stage) == (Source.Status.READY, "")
