"""The offline documents of a real manual (../shared/data/manual-qa) hold what a reader
wants, not the page furniture the old generators picked up: no item is a section number, a
version string, a piece of a web address or path, the running header or words run together;
a quiz never asks for a number from a heading; and they cover the manual."""

from __future__ import annotations

import re
from typing import Any

import pypdfium2 as pdfium
import pytest

from generation.documents.models import GeneratedDocument
from ingest.tests.data import SHARED_DATA
from library.models import Chunk
from notebooks.markers import strip_markers

MANUALS = SHARED_DATA / "manual-qa"
OFFLINE_KINDS = ["report", "table", "infographic", "quiz", "flashcards"]

SECTION_NUMBER_RE = re.compile(r"^\d+(?:\s?\.\s?\d+)+\.?$")
STARTS_WITH_SECTION_NUMBER_RE = re.compile(r"^\d+(?:\.\d+)+\s+[A-ZÄÖÜ]")
VERSION_RE = re.compile(r"\b(?:version|Version|release|Release)\s+\d|\bv?\d+\.\d+\.\d+")
URL_RE = re.compile(r"://|\bwww\.|\.(?:html?|org|com|net|de)\b|^/|\w/\w")
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


def problems_of_a_term(text: str, language: str) -> list[str]:
    """What is wrong with a short item: a figure, a date, an answer, a card's front."""
    text = strip_markers(text).strip()
    found = []
    if SECTION_NUMBER_RE.match(text):
        found.append("a section number")
    if VERSION_RE.search(text):
        found.append("a version string")
    if URL_RE.search(text):
        found.append("a web address or path")
    if RUNNING_HEADER_RE.search(text):
        found.append("the running header")
    if _run_together(text, language):
        found.append(f"words run together ({', '.join(_run_together(text, language))})")
    return found


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


def items(document: GeneratedDocument) -> list[tuple[str, bool]]:
    """Each item a reader sees, with whether it is a short term (True) or a text."""
    data: dict[str, Any] = document.data
    if document.kind == "report":
        lines = [line.strip() for line in data["markdown"].splitlines() if line.strip()]
        return [(line.lstrip("#- ").strip(), False) for line in lines]
    if document.kind == "table":
        return [
            (cell, column == 0) for row in data["rows"] for column, cell in enumerate(row["cells"])
        ]
    if document.kind == "infographic":
        return [
            pair
            for figure in data["figures"]
            for pair in ((figure["value"], True), (figure["label"], False))
        ] + [
            pair
            for event in data["timeline"]
            for pair in ((event["date"], True), (event["event"], False))
        ]
    if document.kind == "quiz":
        found = []
        for item in data["questions"]:
            found.append((item["question"], False))
            options = item.get("options") or [item.get("answer", "")]
            found += [(option, True) for option in options]
        return found
    if document.kind == "flashcards":
        return [
            pair
            for card in data["cards"]
            for pair in ((card["front"], True), (card["back"], False))
        ]
    raise AssertionError(f"no items known for {document.kind}")


def problems(document: GeneratedDocument, language: str) -> list[str]:
    found = []
    for text, is_term in items(document):
        check = problems_of_a_term if is_term else problems_of_a_text
        for problem in check(text, language):
            found.append(f"{document.kind}: {problem}: {text[:120]!r}")
    return found


def heading_numbers(source_id: int) -> set[str]:
    """Every number that a section heading of the source holds ("1.5.5", "1", "5")."""
    numbers: set[str] = set()
    for path in Chunk.objects.filter(source_id=source_id).values_list("section", flat=True):
        for label in path:
            for number in re.findall(r"\d+(?:\.\d+)*", label):
                numbers.add(number)
                numbers.update(number.split("."))
    return numbers


def quiz_answers(document: GeneratedDocument) -> list[str]:
    return [
        item["options"][item["answer_index"]]
        if item["type"] == "multiple_choice"
        else item["answer"]
        for item in document.data["questions"]
    ]


def outline_chapters(path) -> list[str]:
    document = pdfium.PdfDocument(path)
    try:
        return [bookmark.get_title() for bookmark in document.get_toc() if bookmark.level == 0]
    finally:
        document.close()


def shortfalls(document: GeneratedDocument, chapters: list[str]) -> list[str]:
    """What a reader would miss: a chapter without its overview, too few rows, questions or
    cards, an answer that is not in its quoted sentence."""
    data = document.data
    if document.kind == "report":
        headings = [line[4:] for line in data["markdown"].splitlines() if line.startswith("### ")]
        return [] if headings == chapters else [f"report: chapters {headings} != {chapters}"]
    if document.kind == "table":
        return [] if len(data["rows"]) >= 10 else [f"table: {len(data['rows'])} rows"]
    if document.kind == "quiz":
        found = [] if len(data["questions"]) >= 5 else ["quiz: fewer than 5 questions"]
        for item, answer in zip(data["questions"], quiz_answers(document), strict=True):
            if answer not in item["explanation"] or answer in item["question"]:
                found.append(f"quiz: {answer!r} is not what its sentence blanks")
        return found
    if document.kind == "flashcards":
        return [] if len(data["cards"]) >= 8 else [f"flashcards: {len(data['cards'])} cards"]
    return []


@pytest.fixture
def offline(fake_openai, settings):
    settings.CHAT_MODEL = ""  # the offline generators


@pytest.mark.parametrize("language", ["en", "de"])
def test_no_offline_document_of_a_real_manual_holds_page_furniture(
    offline, notebook, add_ready_source, make_document, language
):
    manual = MANUALS / f"debian-reference.{language}.pdf"
    source = add_ready_source(notebook, manual.read_bytes(), manual.name)

    found: list[str] = []
    for kind in OFFLINE_KINDS:
        document = make_document(kind)
        assert document.status == GeneratedDocument.Status.READY, (kind, document.error)
        assert items(document), f"the {kind} is empty"
        found += problems(document, language) + shortfalls(document, outline_chapters(manual))
        if kind == "quiz":
            numbers = heading_numbers(source.pk)
            found += [
                f"quiz: the answer {answer!r} is a number from a heading"
                for answer in quiz_answers(document)
                if answer.strip() in numbers
            ]
    assert not found, "\n".join(found)
