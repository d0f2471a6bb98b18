"""PDFium reads in a child process: a file that crashes or stalls it fails its source, with a
reason, and the worker goes on (ingest/loaders/pdfium_process.py)."""

import signal
from pathlib import Path

import pytest
from django.core.files import File
from django.core.files.base import ContentFile
from procrastinate.contrib.django import app

from ingest.loaders import pdfium_process
from ingest.loaders.pdf_text_layer import read_text_layer
from ingest.passages import LoaderError
from ingest.services import add_source
from ingest.tests.data import PDFS
from library.models import Source

FOUR_PAGES = PDFS / "sample-files/pdflatex-4-pages.pdf"
REAL_SCRIPT = pdfium_process.SCRIPT


def crashing_reader(tmp_path: Path, how: str) -> Path:
    """The real reader, made to crash as PDFium would: on the second page's text, the
    process dies by the given means (a signal, os.abort(), or it stops answering)."""
    script = tmp_path / "crashing_pdfium_text.py"
    script.write_text(
        f"""
import os, runpy, signal, time
import pypdfium2

real = pypdfium2.PdfPage.get_textpage
calls = []

def get_textpage(page):
    calls.append(page)
    if len(calls) == 2:
        {how}
    return real(page)

pypdfium2.PdfPage.get_textpage = get_textpage
runpy.run_path({str(REAL_SCRIPT)!r}, run_name="__main__")
"""
    )
    return script


def run_worker():
    with app.replace_connector(app.connector.get_worker_connector()) as worker_app:
        worker_app.run_worker(
            queues=["ingest"], wait=False, install_signal_handlers=False, listen_notify=False
        )


@pytest.mark.django_db(transaction=True)
def test_a_pdf_that_crashes_the_reader_fails_and_the_worker_reads_the_next_source(
    fake_openai, owner, notebook, tmp_path, monkeypatch
):
    monkeypatch.setattr(
        pdfium_process, "SCRIPT", crashing_reader(tmp_path, "os.kill(os.getpid(), signal.SIGSEGV)")
    )
    with open(FOUR_PAGES, "rb") as handle:
        hostile = add_source(owner=owner, notebook=notebook, upload=File(handle)).source
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
        "The PDF reader crashed on this file (signal SIGSEGV). The file may be damaged or "
        "built to attack PDF readers; Loupe cannot read it."
    )
    assert not hostile.chunks.exists()
    # The same worker (this process) went on to the next source.
    assert after.status == Source.Status.READY, after.error


def test_an_abort_in_the_reader_is_a_crash_with_its_signal(tmp_path, monkeypatch):
    monkeypatch.setattr(pdfium_process, "SCRIPT", crashing_reader(tmp_path, "os.abort()"))

    with pytest.raises(LoaderError, match=r"crashed on this file \(signal SIGABRT\)"):
        read_text_layer(FOUR_PAGES)


def test_a_reader_that_stalls_is_stopped_after_pdf_read_seconds(tmp_path, monkeypatch, settings):
    settings.PDF_READ_SECONDS = 1
    monkeypatch.setattr(pdfium_process, "SCRIPT", crashing_reader(tmp_path, "time.sleep(60)"))
    pages = []

    with pytest.raises(LoaderError, match="took longer than 1 seconds"):
        read_text_layer(FOUR_PAGES, on_page=lambda number, total: pages.append(number))
    # Each child's first page came through before it stalled on its second.
    assert pages == list(range(1, min(pdfium_process.READERS, 4) + 1))


def test_the_child_reads_what_pdfium_reads_in_process():
    import pypdfium2 as pdfium

    layer = pdfium_process.read(FOUR_PAGES, with_text=True)

    document = pdfium.PdfDocument(FOUR_PAGES)
    expected = {
        index + 1: document[index].get_textpage().get_text_range() for index in range(len(document))
    }
    assert layer.page_count == 4
    assert layer.texts == expected


@pytest.mark.parametrize("readers", [1, 3])
def test_pages_shared_among_children_come_back_in_order(monkeypatch, readers):
    import pypdfium2 as pdfium

    monkeypatch.setattr(pdfium_process, "READERS", readers)
    heard = []

    layer = pdfium_process.read(
        FOUR_PAGES, with_text=True, on_page=lambda number, total: heard.append((number, total))
    )

    document = pdfium.PdfDocument(FOUR_PAGES)
    assert list(layer.texts) == [1, 2, 3, 4]
    assert layer.texts == {
        index + 1: document[index].get_textpage().get_text_range() for index in range(4)
    }
    assert heard == [(1, 4), (2, 4), (3, 4), (4, 4)]


def test_a_crash_in_the_child_that_reads_later_pages_fails_the_read(tmp_path, monkeypatch):
    """The second child dies on page 2 while the first reads pages 1 and 3 whole."""
    monkeypatch.setattr(pdfium_process, "READERS", 2)
    script = tmp_path / "second_child_crashes.py"
    script.write_text(
        f"""
import os, runpy, signal
import pypdfium2

real = pypdfium2.PdfDocument.__getitem__

def page(document, index):
    if index == 1:
        os.kill(os.getpid(), signal.SIGSEGV)
    return real(document, index)

pypdfium2.PdfDocument.__getitem__ = page
runpy.run_path({str(REAL_SCRIPT)!r}, run_name="__main__")
"""
    )
    monkeypatch.setattr(pdfium_process, "SCRIPT", script)

    with pytest.raises(LoaderError, match=r"crashed on this file \(signal SIGSEGV\)"):
        read_text_layer(FOUR_PAGES)


def test_a_file_pdfium_cannot_open_says_so(tmp_path):
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.4\nnot a pdf at all")

    with pytest.raises(pdfium_process.CannotOpen):
        pdfium_process.read(broken, with_text=True)


def test_signals_are_named_for_people():
    assert pdfium_process.describe_exit(-signal.SIGKILL) == "signal SIGKILL"
    assert pdfium_process.describe_exit(3) == "exit status 3"
