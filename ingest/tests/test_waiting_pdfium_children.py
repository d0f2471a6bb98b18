"""PDFium's children are started before they are needed, their imports done: the text
reader always, a warm renderer (the web server's, for a cited page) too; whoever takes one
leaves another waiting, and each child still reads one file and ends
(ingest/loaders/waiting_child.py)."""

import os
import signal

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
