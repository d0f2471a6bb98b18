"""Measuring answers on page-gold question sets (`manage.py evaluate --pages`).

A page-gold set names, for each question, the PDF it is about, the page that answers it
(`page`, plus `also_answered_on`, 1-based physical pages) and a short verbatim `quote` from
that page. Each question is asked in a notebook holding its document alone, through the
normal answer path (generation/answering/: rewrite, search, prompt, model or extractive
answer, citations verified), and scored per language:

- retrieved@1/4/8: a gold page is among the first n passages the answer was given;
- cited: one of the answer's citations points at a gold page;
- refused: the answer is a refusal (no passage matched);
- quote found: the quote, whitespace runs collapsed, occurs in the text of the gold page's
  chunks (joined in order): a quote the chunks do not hold cannot be quoted back, whatever
  the search does, so a low figure points at the PDF's text, not at retrieval.

Off-topic questions (which the document cannot answer) count as refused when the answer
cites nothing; otherwise what they cited is listed.

With `answers`, each answer is also read as a person would (`read_answer`): its text, mode,
cited pages, whether a gold page is cited, its sentences and how many carry a citation the
support check verified, whether it was only markers, and how long it took.
"""

from __future__ import annotations

import json
import re
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from django.contrib.auth.models import User
from django.core.files import File
from django.utils import timezone, translation

from evaluation.recall import RECALL_AT, EvaluationError, normalise
from generation.answering import Answer, answer_question
from generation.citations import OPENING_MARKERS_RE, claim_spans, hollow
from ingest.services import add_source
from ingest.waiting import wait_for_sources
from library import embedding_state
from library.languages import reader_language
from library.models import Chunk, Source
from notebooks.models import Message, Notebook
from providers.errors import ProviderError


@dataclass(frozen=True)
class PageItem:
    id: str
    doc: str  # the PDF's file name in --docs
    lang: str
    question: str
    pages: frozenset[int]  # `page` and `also_answered_on`
    quote: str
    page: int  # `page` alone: the quote is on it


@dataclass(frozen=True)
class OfftopicItem:
    doc: str
    lang: str
    question: str


def jsonl_rows(path: Path) -> Iterable[tuple[int, dict[str, Any]]]:
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            try:
                row = json.loads(line)
            except ValueError as exc:
                raise EvaluationError(f"{path}, line {number}: not JSON ({exc}).") from exc
            if not isinstance(row, dict):
                raise EvaluationError(f"{path}, line {number}: expected a JSON object.")
            yield number, row


def load_page_items(path: Path) -> list[PageItem]:
    """Read QUESTIONS.jsonl: {"id", "doc", "lang", "question", "page", "also_answered_on",
    "quote"} per line (other fields are ignored)."""
    items = []
    for number, row in jsonl_rows(path):
        try:
            page = int(row["page"])
            items.append(
                PageItem(
                    id=str(row.get("id") or number),
                    doc=str(row["doc"]),
                    lang=str(row.get("lang") or "?"),
                    question=str(row["question"]),
                    pages=frozenset({page, *(int(p) for p in row.get("also_answered_on") or [])}),
                    quote=str(row.get("quote") or ""),
                    page=page,
                )
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise EvaluationError(
                f"{path}, line {number}: expected doc, question and page, with lang, quote "
                f"and also_answered_on optional ({exc!r})."
            ) from exc
    if not items:
        raise EvaluationError(f"{path} holds no questions.")
    return items


def load_offtopic(path: Path) -> list[OfftopicItem]:
    """Read OFFTOPIC.jsonl: {"doc", "lang", "question"} per line."""
    items = []
    for number, row in jsonl_rows(path):
        try:
            items.append(
                OfftopicItem(
                    doc=str(row["doc"]),
                    lang=str(row.get("lang") or "?"),
                    question=str(row["question"]),
                )
            )
        except KeyError as exc:
            raise EvaluationError(f"{path}, line {number}: expected doc and question.") from exc
    if not items:
        raise EvaluationError(f"{path} holds no questions.")
    return items


def ingest_pdfs(*, user: User, docs: Path, names: Iterable[str]) -> dict[str, Notebook]:
    """One fresh notebook per document, holding DIR/<name> added through the normal
    pipeline; the same file added before by `user` is linked, not read or embedded again."""
    notebooks: dict[str, Notebook] = {}
    sources = []
    stamp = f"{timezone.now():%Y-%m-%d %H:%M:%S.%f}"
    for name in sorted(set(names)):
        path = docs / name
        if not path.is_file():
            raise EvaluationError(f"{path}: no such document.")
        notebook = Notebook.objects.create(owner=user, title=f"evaluate {name} {stamp}")
        notebooks[name] = notebook
        with path.open("rb") as handle:
            sources.append(
                add_source(owner=user, notebook=notebook, upload=File(handle, path.name)).source
            )
    finished = wait_for_sources(source.pk for source in sources)
    failed = [source for source in finished if source.status != Source.Status.READY]
    if failed:
        raise EvaluationError(
            "Some documents failed: "
            + "; ".join(f"{source.filename}: {source.error}" for source in failed)
        )
    return notebooks


def page_texts(notebook: Notebook) -> dict[int, str]:
    """Each page's chunks joined in order, whitespace collapsed."""
    pages: dict[int, list[str]] = defaultdict(list)
    chunks = Chunk.objects.filter(
        source__notebooksource__notebook=notebook,
        embedding_model=embedding_state.active_model(),
        page__isnull=False,
    ).order_by("source_id", "ordinal")
    for page, text in chunks.values_list("page", "text"):
        if page is not None:  # filtered out above; the type does not know
            pages[page].append(text)
    return {page: normalise(" ".join(texts)) for page, texts in pages.items()}


@dataclass
class ReadFigures:
    """With `answers`: the sentences written, those with a verified citation, the answers of
    only markers, and each answer's seconds (`read_answer`'s rows added up)."""

    sentences: int = 0
    supported_sentences: int = 0
    marker_only: int = 0
    seconds: list[float] = field(default_factory=list)

    def add(self, row: dict[str, Any]) -> None:
        self.sentences += row["sentences"]
        self.supported_sentences += row["supported_sentences"]
        self.marker_only += row["marker_only"]
        self.seconds.append(row["seconds"])

    def as_dict(self) -> dict[str, Any]:
        if not self.seconds:
            return {}
        ordered = sorted(self.seconds)
        return {
            "sentences": self.sentences,
            "supported_sentences": self.supported_sentences,
            "marker_only": self.marker_only,
            "seconds_p50": round(ordered[len(ordered) // 2], 1),
            "seconds_max": round(ordered[-1], 1),
        }


@dataclass
class LanguageFigures:
    questions: int = 0
    retrieved: dict[int, int] = field(default_factory=lambda: dict.fromkeys(RECALL_AT, 0))
    cited: int = 0
    refused: int = 0
    quote_found: int = 0
    missed: list[dict[str, Any]] = field(default_factory=list)  # gold page not cited
    # Questions the chat model failed to answer (a slow or broken server): counted apart.
    failed: list[dict[str, Any]] = field(default_factory=list)
    read: ReadFigures = field(default_factory=ReadFigures)

    def as_dict(self) -> dict[str, Any]:
        return {
            "questions": self.questions,
            **{f"retrieved@{n}": count for n, count in self.retrieved.items()},
            "cited": self.cited,
            "refused": self.refused,
            "quote_found": self.quote_found,
            "missed": self.missed,
            "failed": self.failed,
        } | self.read.as_dict()


@dataclass
class OfftopicFigures:
    questions: int = 0
    refused: int = 0
    cited: list[dict[str, Any]] = field(default_factory=list)  # what the others cited
    failed: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "questions": self.questions,
            "refused": self.refused,
            "cited": self.cited,
            "failed": self.failed,
        }


def _cited_pages(answer: Answer) -> list[int | None]:
    return [citation.page for citation in answer.citations]


_MARKER_RE = re.compile(r"\[(\d+)\]")


def answer_row(answer: Answer, item: PageItem, seconds: float) -> dict[str, Any]:
    """One answer as a person reads it (`read_answer`), and the pages it cites."""
    cited = _cited_pages(answer)
    return {
        "id": item.id,
        "question": item.question,
        **read_answer(answer, seconds),
        "cited_pages": cited,
        "gold": sorted(item.pages),
        "gold_cited": any(page in item.pages for page in cited),
    }


def read_answer(answer: Answer, seconds: float) -> dict[str, Any]:
    """What an answer says, and which of its sentences a verified citation backs."""
    text = answer.message.content
    supported = {citation.n for citation in answer.citations if citation.supported}
    spans = claim_spans(text)
    sentences, backed = [], []
    for number, (start, end) in enumerate(spans):
        sentence = text[start:end]
        if hollow(sentence):  # markers after a full stop: the sentence before's
            continue
        # The markers a span opens with are the sentence before's ("… pond. [1] Then …").
        own = OPENING_MARKERS_RE.match(sentence)
        after = text[spans[number + 1][0] :] if number + 1 < len(spans) else ""
        opening = OPENING_MARKERS_RE.match(after)
        markers = _MARKER_RE.findall(
            sentence[own.end() if own else 0 :] + (opening.group(0) if opening else "")
        )
        sentences.append(sentence)
        if any(int(n) in supported for n in markers):
            backed.append(sentence)
    return {
        "mode": answer.message.mode,
        "answer": text,
        "sentences": len(sentences),
        "supported_sentences": len(backed),
        "marker_only": answer.message.mode == Message.Mode.LLM and hollow(text),
        "refused": answer.message.mode == Message.Mode.REFUSAL,
        "seconds": round(seconds, 1),
    }


def ask(user: User, notebook: Notebook, question: str, lang: str) -> Answer:
    """One question through the normal answer path. A command has no reader: a refusal is
    written in the question's language."""
    with translation.override(reader_language(question, given=lang)):
        return answer_question(user=user, notebook=notebook, question=question)


class Question(Protocol):
    """A question of a set: a page-gold or a place-gold one."""

    @property
    def id(self) -> str: ...
    @property
    def question(self) -> str: ...
    @property
    def lang(self) -> str: ...


def ask_item(
    user: User, notebook: Notebook, item: Question, failed: list[dict[str, Any]]
) -> tuple[Answer, float] | None:
    """A set's question (`id`, `question`, `lang`) asked, and the seconds it took; None when
    the chat model failed, which goes to `failed`: one answer's failure is a figure, not
    the run's end."""
    started = time.monotonic()
    try:
        answer = ask(user, notebook, item.question, item.lang)
    except ProviderError as exc:
        failed.append({"id": item.id, "error": str(exc)})
        return None
    return answer, time.monotonic() - started


@dataclass
class AnswerRows:
    """With `answers`: each answer's row, kept and given to `on_row` as it is made (a run of
    an hour keeps what it measured if stopped)."""

    on_row: Callable[[dict[str, Any]], None]
    rows: list[dict[str, Any]] = field(default_factory=list)

    def add(self, row: dict[str, Any], figures: ReadFigures) -> None:
        self.rows.append(row)
        self.on_row(row)
        figures.add(row)


def evaluate_pages(
    *,
    user: User,
    notebooks: dict[str, Notebook],
    items: list[PageItem],
    offtopic: list[OfftopicItem],
    answers: bool = False,
    on_row: Callable[[dict[str, Any]], None] = lambda row: None,
) -> dict[str, Any]:
    """Ask every question in its document's notebook and score the answers, per language;
    with `answers`, every answer's row too (`answer_row`), under "answers", each also given
    to `on_row` as it is made (a run of an hour keeps what it measured if stopped).

    Every answer is a billed call like any other, at `user`'s expense."""
    texts = {name: page_texts(notebook) for name, notebook in notebooks.items()}
    by_language: dict[str, LanguageFigures] = defaultdict(LanguageFigures)
    kept = AnswerRows(on_row)
    for item in items:
        figures = by_language[item.lang]
        figures.questions += 1
        asked = ask_item(user, notebooks[item.doc], item, figures.failed)
        if asked is None:
            continue
        answer, seconds = asked
        if answers:
            kept.add(answer_row(answer, item, seconds), figures.read)
        pages = [hit.chunk.page for hit in answer.passages]
        for n in RECALL_AT:
            figures.retrieved[n] += any(page in item.pages for page in pages[:n])
        cited = _cited_pages(answer)
        if any(page in item.pages for page in cited):
            figures.cited += 1
        else:
            figures.missed.append(
                {"id": item.id, "gold": sorted(item.pages), "retrieved": pages, "cited": cited}
            )
        figures.refused += answer.message.mode == Message.Mode.REFUSAL
        figures.quote_found += bool(item.quote) and normalise(item.quote) in texts[item.doc].get(
            item.page, ""
        )
    off: dict[str, OfftopicFigures] = defaultdict(OfftopicFigures)
    for question in offtopic:
        figures_off = off[question.lang]
        figures_off.questions += 1
        try:
            answer = ask(user, notebooks[question.doc], question.question, question.lang)
        except ProviderError as exc:
            figures_off.failed.append({"question": question.question, "error": str(exc)})
            continue
        if answer.citations:
            figures_off.cited.append({"question": question.question, "pages": _cited_pages(answer)})
        else:
            figures_off.refused += 1
    result: dict[str, Any] = {
        "questions": {lang: figures.as_dict() for lang, figures in sorted(by_language.items())}
    }
    if offtopic:
        result["offtopic"] = {lang: figures.as_dict() for lang, figures in sorted(off.items())}
    if answers:
        result["answers"] = kept.rows
    return result
