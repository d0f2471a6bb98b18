"""The kinds of generated document Loupe makes without a chat model (a report of quoted key
sentences, a mind map of the outline, a slide deck and a video of the key sentences), made
from a real 261-page manual (../shared/data/manual-qa), read in Chromium at desktop width as
a reader would, and photographed for docs/features.md (docs/screenshots/studio-<kind>.png,
and a frame of the video overview's MP4).

The worker reads the manual as for any upload; the documents are made in this process with
no chat model and the local voices, the way a Loupe without a model server makes them, the
embeddings from the live server's fake model.
"""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.core.files import File

from generation.documents.models import GeneratedDocument
from generation.documents.services import generate_document
from ingest.services import add_source
from ingest.tests.data import MANUAL, outline_chapters
from notebooks.models import Notebook
from providers import tts

from .conftest import SCREENSHOTS
from .helpers import OVERFLOWS

KINDS = ["report", "mindmap", "slides", "video"]  # what Loupe makes without a chat model
CITATION_RE = re.compile(r"^\[\d+\]$")


@pytest.fixture
def offline(live, settings):
    """This process makes documents as an offline Loupe: no chat model, the local voices,
    and the live server's fake embedding model, so its vectors match the manual's."""
    settings.OPENAI_BASE_URL = live.models.base_url
    settings.OPENAI_API_KEY = "test"
    settings.CHAT_MODEL = ""
    settings.EMBEDDING_MODEL = "fake-embed"
    settings.EMBEDDING_DIMENSIONS = 64
    settings.SOURCE_SUMMARIES = "extractive"
    settings.SIMILARITY_FLOOR = 0.0
    return live


def make(owner, notebook: Notebook, kind: str) -> GeneratedDocument:
    """The document made here, as the worker's job would (queued without a job, for the
    worker's chat model not to make it instead)."""
    # A brief video: a few slides, for the test's time; the explainer is drawn the same way.
    document = GeneratedDocument.objects.create(
        notebook=notebook, owner=owner, kind=kind, video_format="brief"
    )
    generate_document(document_id=document.pk)
    document.refresh_from_db()
    assert document.status == GeneratedDocument.Status.READY, f"{kind}: {document.error}"
    assert document.mode == GeneratedDocument.Mode.EXTRACTIVE, kind
    return document


def drawn_texts(page) -> list[str]:
    return page.locator(".drawing svg text").all_text_contents()


def read_report(page, chapters: list[str]) -> None:
    # A part of the report per chapter of the manual's outline, under the manual's title
    # (the page owns h1-h3: the Markdown's ## and ### become h4 and h5).
    assert page.locator(".document-report .markdown h4").count() == 1
    headings = page.locator(".document-report .markdown h5").all_inner_texts()
    assert [heading for heading in headings if heading in chapters] == chapters, headings
    citations = page.locator(".document-report .markdown a").all_inner_texts()
    assert len([text for text in citations if CITATION_RE.match(text)]) >= 10, citations


def read_mindmap(page, chapters: list[str]) -> None:
    drawn = " ".join(drawn_texts(page))
    drawn = re.sub(r"\s+", " ", drawn)
    missing = [chapter for chapter in chapters if chapter not in drawn]
    assert not missing, f"chapters not drawn: {missing}"


def read_slides(page, chapters: list[str]) -> None:
    deck = page.locator("[data-deck]")
    slides = deck.locator("[data-slide]")
    assert slides.count() >= 6
    assert deck.locator("[data-slide]:not([hidden])").count() == 1  # one at a time
    headings = [heading.strip() for heading in deck.locator(".slide-heading").all_inner_texts()]
    assert sum(heading in chapters for heading in headings) >= 6, headings
    first = slides.nth(0)
    assert first.locator("a", has_text=CITATION_RE).count() >= 2, first.inner_text()
    deck.focus()
    page.keyboard.press("ArrowRight")
    assert deck.locator(".deck-position").inner_text() == f"2 / {slides.count()}"
    assert slides.nth(1).is_visible() and not first.is_visible()
    page.keyboard.press("ArrowLeft")
    page.click("[data-deck-present]")
    assert deck.evaluate("deck => deck.classList.contains('deck-presenting')")
    page.keyboard.press("Escape")
    assert not deck.evaluate("deck => deck.classList.contains('deck-presenting')")
    assert page.locator("a", has_text="Download PPTX").count() == 1


def read_video(page, chapters: list[str]) -> None:
    player = page.locator(".document-video video[controls]")
    page.wait_for_function("() => document.querySelector('.document-video video').readyState >= 1")
    assert player.evaluate("video => [video.videoWidth, video.videoHeight]") == [1280, 720]
    assert player.evaluate("video => video.duration") > 15


READERS = {kind: globals()[f"read_{kind}"] for kind in KINDS}


def test_each_kind_of_a_real_manual_reads_well_in_a_browser(page_for, offline):
    page = page_for("sasha", viewport={"width": 1280, "height": 900})
    owner = get_user_model().objects.get(username="sasha")
    notebook = Notebook.objects.create(owner=owner, title="Debian Reference")
    with MANUAL.open("rb") as handle:
        add_source(owner=owner, notebook=notebook, upload=File(handle, name=MANUAL.name))
    page.goto(f"/notebooks/{notebook.pk}/")
    page.wait_for_selector(".source .badge-ready", timeout=300_000)
    chapters = outline_chapters()

    for kind in KINDS:
        document = make(owner, notebook, kind)
        page.goto(f"/notebooks/{notebook.pk}/studio/{document.pk}/")
        page.wait_for_selector(f".document-{kind}")
        READERS[kind](page, chapters)
        assert page.evaluate(OVERFLOWS) == [], kind
        page.evaluate("window.scrollTo(0, 0)")  # opening a card or a list may have scrolled
        page.screenshot(path=str(SCREENSHOTS / f"studio-{kind}.png"))
        if kind == "video":  # a frame of the MP4 itself, as a player shows it
            frame = SCREENSHOTS / "studio-video-frame.png"
            made = tts.run_ffmpeg(
                "-ss", "6", "-i", document.video.path, "-frames:v", "1", "-y", str(frame)
            )  # fmt: skip
            assert made.returncode == 0, made.stderr
    assert page.console.unexpected() == []
