"""PDFium's children are started before they are needed, their imports done: the text
reader always, a warm renderer (the web server's, for a cited page) too; whoever takes one
leaves another waiting, and each child still reads one file and ends; one left waiting past
PDF_CHILD_IDLE_SECONDS ends (ingest/loaders/waiting_child.py)."""

import os
import signal
import time

from ingest.loaders import pdfium_process, pdfium_rendering
from ingest.loaders.pdfium_rendering import PageRenderer
from ingest.page_images import render_page
from ingest.tests.data import PDFS

FOUR_PAGES = PDFS / "sample-files/pdflatex-4-pages.pdf"


def waiting_child():
    return pdfium_rendering._waiting.waiting()


def test_a_cited_page_is_drawn_by_the_child_left_waiting_by_the_one_before():
    render_page(FOUR_PAGES, 1)
    waiting = waiting_child()
    assert waiting is not None and waiting.process.poll() is None

    rendered = render_page(FOUR_PAGES, 2, quote="anything")

    assert rendered.image.width > 0
    assert waiting.process.wait(timeout=10) == 0  # it drew page 2, then ended
    assert waiting_child() is not waiting  # another waits for the next picture


def test_a_waiting_child_that_died_is_replaced_by_a_new_one():
    render_page(FOUR_PAGES, 1)
    dead = waiting_child()
    os.kill(dead.process.pid, signal.SIGKILL)
    dead.process.wait(timeout=10)

    rendered = render_page(FOUR_PAGES, 3)

    assert rendered.image.width > 0


def test_a_renderer_that_is_not_warm_leaves_no_child_waiting():
    pdfium_rendering._waiting.take(pdfium_rendering.SCRIPT).end()  # none left by earlier tests

    with PageRenderer(FOUR_PAGES) as renderer:
        assert renderer.page_count == 4

    assert waiting_child() is None


def test_a_pdf_is_read_by_the_child_left_waiting_by_the_read_before():
    pdfium_process.read(FOUR_PAGES, with_text=True)
    waiting = pdfium_process._waiting.waiting()
    assert waiting is not None and waiting.process.poll() is None

    layer = pdfium_process.read(FOUR_PAGES, with_text=True)

    assert layer.page_count == len(layer.texts) == 4
    assert waiting.process.wait(timeout=10) == 0  # it read the file, then ended
    assert pdfium_process._waiting.waiting() is not waiting


def _gone(child) -> bool:
    """Whether the child's process has exited and been reaped: no process has its id."""
    try:
        os.kill(child.process.pid, 0)
    except ProcessLookupError:
        return True
    return False


def _wait_until(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


def test_readers_left_waiting_past_their_idle_time_end_and_the_next_read_starts_one(settings):
    settings.PDF_CHILD_IDLE_SECONDS = 1.0
    pdfium_process.read(FOUR_PAGES, with_text=True)
    waiting = list(pdfium_process._waiting._children)
    assert len(waiting) == pdfium_process.READERS
    assert all(child.process.poll() is None for child in waiting)

    assert _wait_until(lambda: all(_gone(child) for child in waiting), seconds=15)
    assert pdfium_process._waiting.waiting() is None

    layer = pdfium_process.read(FOUR_PAGES, with_text=True)

    assert layer.page_count == len(layer.texts) == 4
    assert layer.texts[1].strip()


def test_a_renderer_left_waiting_past_its_idle_time_ends_and_the_next_page_is_still_drawn(
    settings,
):
    settings.PDF_CHILD_IDLE_SECONDS = 1.0
    render_page(FOUR_PAGES, 1)
    waiting = waiting_child()
    assert waiting is not None and waiting.process.poll() is None

    assert _wait_until(lambda: _gone(waiting), seconds=15)
    assert waiting_child() is None

    rendered = render_page(FOUR_PAGES, 2)

    assert rendered.image.width > 0


def test_a_child_waits_its_idle_time_before_it_ends(settings):
    settings.PDF_CHILD_IDLE_SECONDS = 30.0
    pdfium_process.read(FOUR_PAGES, with_text=True)
    waiting = pdfium_process._waiting.waiting()

    time.sleep(2)

    assert waiting is not None and waiting.process.poll() is None
    assert pdfium_process._waiting.waiting() is waiting
