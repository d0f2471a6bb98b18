"""The offline report of a real manual (../shared/data/manual-qa) holds what a reader wants,
not page furniture: no line starts with a section heading, holds the running header or words
run together; and it covers the manual, chapter by chapter."""

from __future__ import annotations

import re

import pypdfium2 as pdfium
import pytest

from generation.documents.models import GeneratedDocument
from ingest.tests.data import SHARED_DATA
from notebooks.markers import strip_markers

MANUALS = SHARED_DATA / "manual-qa"

STARTS_WITH_SECTION_NUMBER_RE = re.compile(r"^\d+(?:\.\d+)+\s+[A-ZÄÖÜ]")
RUNNING_HEADER_RE = re.compile(r"Debian[- ]Referen[cz]\s*\(?\s*(?:\d|release|version)", re.I)
# German writes compounds as one word ("Netzwerkkonfiguration"): longer ones count there.
LONGEST_WORD = {"en": 20, "de": 30}


def _run_together(text: str, language: str) -> list[str]:
    """Words longer than a word of the language gets that are no address, path or file."""
    longest = LONGEST_WORD[language]
    return [
        word
        for word in re.findall(r"\S+", text)
        if re.search(rf"[^\W\d_]{{{longest + 1},}}", word)
        and not re.search(r"[/@_.:=]", word.strip(".,;:"))
        and not word.lower().startswith("http")
    ]


def problems_of_a_text(text: str, language: str) -> list[str]:
    """What is wrong with a sentence, heading or label: a section heading glued on, the
    running header, words run together."""
    text = strip_markers(text).strip()
    found = []
    if STARTS_WITH_SECTION_NUMBER_RE.match(text):
        found.append("starts with a section heading")
    if RUNNING_HEADER_RE.search(text):
        found.append("the running header")
    if _run_together(text, language):
        found.append(f"words run together ({', '.join(_run_together(text, language))})")
    return found


def problems(document: GeneratedDocument, language: str) -> list[str]:
    lines = [line.strip() for line in document.data["markdown"].splitlines() if line.strip()]
    return [
        f"report: {problem}: {line[:120]!r}"
        for line in lines
        for problem in problems_of_a_text(line.lstrip("#- ").strip(), language)
    ]


def outline_chapters(path) -> list[str]:
    document = pdfium.PdfDocument(path)
    try:
        return [bookmark.get_title() for bookmark in document.get_toc() if bookmark.level == 0]
    finally:
        document.close()


def shortfalls(document: GeneratedDocument, chapters: list[str]) -> list[str]:
    """A chapter without its part of the report."""
    headings = [
        line[4:] for line in document.data["markdown"].splitlines() if line.startswith("### ")
    ]
    return [] if headings == chapters else [f"report: chapters {headings} != {chapters}"]


@pytest.fixture
def offline(fake_openai, settings):
    settings.CHAT_MODEL = ""  # the offline generators


@pytest.mark.parametrize("language", ["en", "de"])
def test_the_offline_report_of_a_real_manual_holds_no_page_furniture(
    offline, notebook, add_ready_source, make_document, language
):
    manual = MANUALS / f"debian-reference.{language}.pdf"
    add_ready_source(notebook, manual.read_bytes(), manual.name)

    document = make_document("report")

    assert document.status == GeneratedDocument.Status.READY, document.error
    found = problems(document, language) + shortfalls(document, outline_chapters(manual))
    assert not found, "\n".join(found)
