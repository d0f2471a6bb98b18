"""A warm renderer (the web server's, for a cited page) takes a child started beforehand,
its imports done, and leaves another waiting; each child still draws one file and ends
(ingest/loaders/pdfium_rendering.py)."""

import os
import signal

from ingest.loaders import pdfium_rendering
from ingest.loaders.pdfium_rendering import PageRenderer
from ingest.tests.data import PDFS
from web.page_images import render_page

FOUR_PAGES = PDFS / "sample-files/pdflatex-4-pages.pdf"


def waiting_child():
    return pdfium_rendering._waiting._child


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
    left = pdfium_rendering._waiting.take()  # none left by earlier tests
    if left is not None:
        left.end(left.process, left.errors)

    with PageRenderer(FOUR_PAGES) as renderer:
        assert renderer.page_count == 4

    assert waiting_child() is None
