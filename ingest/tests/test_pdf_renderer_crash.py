"""PDFium renders pages in a child process: a file that crashes or stalls it while drawing a
page fails its source (or its page picture), with a reason, and the worker and the web server
go on (ingest/loaders/pdfium_rendering.py)."""

from pathlib import Path

import pypdfium2 as pdfium
import pytest
from django.core.files import File
from django.core.files.base import ContentFile
from procrastinate.contrib.django import app

from ingest.loaders import pdfium_rendering
from ingest.loaders.pdf import RENDER_DPI, RENDER_MAX_PIXELS, render_pages
from ingest.page_images import PageNotRendered, render_page
from ingest.passages import LoaderError
from ingest.services import add_source
from ingest.tests.data import PDFS
from library.models import Source

FOUR_PAGES = PDFS / "sample-files/pdflatex-4-pages.pdf"
REAL_SCRIPT = pdfium_rendering.SCRIPT


def crashing_renderer(tmp_path: Path, how: str, *, on_call: int) -> Path:
    """The real renderer, made to fail as PDFium would: on its `on_call`-th page drawn, the
    process dies by the given means (a signal, os.abort(), or it stops answering)."""
    script = tmp_path / "crashing_pdfium_pages.py"
    script.write_text(
        f"""
import os, runpy, signal, time
import pypdfium2

real = pypdfium2.PdfPage.render
calls = []

def render(page, **options):
    calls.append(page)
    if len(calls) == {on_call}:
        {how}
    return real(page, **options)

pypdfium2.PdfPage.render = render
runpy.run_path({str(REAL_SCRIPT)!r}, run_name="__main__")
"""
    )
    return script


def run_worker():
    with app.replace_connector(app.connector.get_worker_connector()) as worker_app:
        worker_app.run_worker(
            queues=["ingest"], wait=False, install_signal_handlers=False, listen_notify=False
        )


def test_the_child_draws_the_pixels_pdfium_draws_in_process():
    [(number, image)] = list(render_pages(FOUR_PAGES, [2]))

    page = pdfium.PdfDocument(FOUR_PAGES)[1]
    expected = page.render(scale=RENDER_DPI / 72).to_pil().convert("RGB")
    assert number == 2
    assert image.size == expected.size
    assert image.tobytes() == expected.tobytes()
    assert image.size[0] * image.size[1] < RENDER_MAX_PIXELS


def test_one_child_draws_every_page_asked_for_in_order():
    assert [number for number, _ in render_pages(FOUR_PAGES, [4, 1, 3])] == [4, 1, 3]


@pytest.mark.django_db(transaction=True)
def test_a_pdf_that_crashes_the_renderer_fails_and_the_worker_reads_the_next_source(
    fake_openai, owner, notebook, tmp_path, monkeypatch
):
    monkeypatch.setattr(
        pdfium_rendering,
        "SCRIPT",
        crashing_renderer(tmp_path, "os.kill(os.getpid(), signal.SIGSEGV)", on_call=1),
    )
    with open(FOUR_PAGES, "rb") as handle:
        hostile = add_source(
            owner=owner, notebook=notebook, upload=File(handle), pdf_capture="vision"
        ).source
    after = add_source(
        owner=owner,
        notebook=notebook,
        upload=ContentFile(b"A note added after the hostile file.", name="after.txt"),
    ).source

    run_worker()

    hostile.refresh_from_db()
    after.refresh_from_db()
    assert hostile.status == Source.Status.FAILED
    assert hostile.error == (
        "The PDF renderer crashed on this file (signal SIGSEGV) while drawing its pages as "
        "images. The file may be damaged or built to attack PDF readers; Loupe cannot read it."
    )
    assert not hostile.chunks.exists()
    # The same worker (this process) went on to the next source.
    assert after.status == Source.Status.READY, after.error


def test_an_abort_while_drawing_the_second_page_is_a_crash_after_the_first(tmp_path, monkeypatch):
    monkeypatch.setattr(
        pdfium_rendering, "SCRIPT", crashing_renderer(tmp_path, "os.abort()", on_call=2)
    )
    drawn = []

    with pytest.raises(LoaderError, match=r"crashed on this file \(signal SIGABRT\)"):
        for number, _ in render_pages(FOUR_PAGES, [1, 2, 3]):
            drawn.append(number)
    assert drawn == [1]


def test_a_renderer_that_stalls_is_stopped_after_pdf_read_seconds(tmp_path, monkeypatch, settings):
    settings.PDF_READ_SECONDS = 1
    monkeypatch.setattr(
        pdfium_rendering, "SCRIPT", crashing_renderer(tmp_path, "time.sleep(60)", on_call=2)
    )
    drawn = []

    with pytest.raises(LoaderError, match="took longer than 1 seconds"):
        for number, _ in render_pages(FOUR_PAGES, [1, 2]):
            drawn.append(number)
    assert drawn == [1]


def test_time_spent_between_pages_does_not_count_against_the_renderer(settings):
    """The vision reader may take minutes over one page; only the drawing is timed."""
    import time

    settings.PDF_READ_SECONDS = 1
    drawn = []
    for number, _ in render_pages(FOUR_PAGES, [1, 2]):
        drawn.append(number)
        time.sleep(1.5)
    assert drawn == [1, 2]


def test_a_page_pdfium_cannot_draw_is_skipped_and_the_others_drawn(tmp_path, monkeypatch):
    monkeypatch.setattr(
        pdfium_rendering,
        "SCRIPT",
        crashing_renderer(tmp_path, "raise RuntimeError('bad page')", on_call=1),
    )

    assert [number for number, _ in render_pages(FOUR_PAGES, [1, 2])] == [2]


def test_a_cited_page_whose_renderer_crashes_is_not_rendered_and_says_why(tmp_path, monkeypatch):
    monkeypatch.setattr(
        pdfium_rendering,
        "SCRIPT",
        crashing_renderer(tmp_path, "os.kill(os.getpid(), signal.SIGSEGV)", on_call=1),
    )

    with pytest.raises(PageNotRendered, match=r"crashed on this file \(signal SIGSEGV\)"):
        render_page(FOUR_PAGES, 1, quote="anything")


def test_a_cited_page_past_the_end_is_not_rendered():
    with pytest.raises(PageNotRendered, match="no page 5"):
        render_page(FOUR_PAGES, 5)


def test_a_file_pdfium_cannot_open_is_not_rendered(tmp_path):
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.4\nnot a pdf at all")

    with pytest.raises(PageNotRendered):
        render_page(broken, 1)
    with pytest.raises(LoaderError, match="could not be rendered as images"):
        list(render_pages(broken, [1]))
