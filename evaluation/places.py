"""Measuring office files, e-books and web files on place-gold questions
(`manage.py evaluate --places`).

A place-gold set names, for each question, the file it is about (`file`, under --docs), a
verbatim `quote` that answers it and `where` it is: `{"slide": n}` in a deck, `{"sheet":
name}` in a workbook, `{"heading_path": [...]}` or `{"section": heading}` in a document,
`{}` where no heading is above it. Each question is asked in a notebook holding its file
alone, through the normal answer path, and scored per kind of file (its suffix):

- quote found: the quote, whitespace runs collapsed, occurs in one of the file's chunks (a
  sheet's number, quoted as stored, also as the sheet shows it: `holds`);
- place right: in a chunk at its place: the slide's page, the sheet's section, or a section
  path holding the gold heading last (a heading is matched without case, spaces and
  punctuation, so Wikipedia's "Properties[edit]" is "Properties");
- retrieved@1/4/8: such a chunk (at the place, holding the quote) is among the first n
  passages the answer was given;
- cited: one of the answer's citations points at such a chunk;
- refused: the answer is a refusal (the passages seemed not to cover the question).

With `answers`, each answer is also read as a person would (`evaluation.pages.read_answer`):
its text, the places it cites, whether one is the gold place, its sentences and how many a
verified citation backs.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from django.contrib.auth.models import User

from evaluation.pages import AnswerRows, ReadFigures, ask_item, jsonl_rows, read_answer
from evaluation.recall import RECALL_AT, EvaluationError, normalise
from generation.answering import Answer
from library import embedding_state
from library.models import Chunk
from notebooks.models import Message, Notebook

_NOT_WORD = re.compile(r"\W+")


@dataclass(frozen=True)
class PlaceItem:
    id: str
    file: str  # the file's path under --docs
    lang: str
    question: str
    quote: str
    where: dict[str, Any]

    @property
    def kind(self) -> str:
        return PurePosixPath(self.file).suffix.lstrip(".").lower() or "?"


def load_place_items(path: Path) -> list[PlaceItem]:
    """Read QUESTIONS.jsonl: {"id", "file", "lang", "question", "quote", "where"} per line
    (other fields are ignored)."""
    items = []
    for number, row in jsonl_rows(path):
        try:
            where = row.get("where") or {}
            if not isinstance(where, dict):
                raise TypeError("where must be an object")
            items.append(
                PlaceItem(
                    id=str(row.get("id") or number),
                    file=str(row["file"]),
                    lang=str(row.get("lang") or "?"),
                    question=str(row["question"]),
                    quote=str(row["quote"]),
                    where=where,
                )
            )
        except (KeyError, TypeError) as exc:
            raise EvaluationError(
                f"{path}, line {number}: expected file, question, quote and where ({exc!r})."
            ) from exc
    if not items:
        raise EvaluationError(f"{path} holds no questions.")
    return items


def _key(text: str) -> str:
    return _NOT_WORD.sub("", text.casefold())


def at_place(chunk: Chunk, where: dict[str, Any]) -> bool:
    """Whether a chunk is where the gold place says."""
    section = [str(part) for part in chunk.section or []]
    if "slide" in where:
        return chunk.page == int(where["slide"])
    if "sheet" in where:
        return bool(section) and section[0] == str(where["sheet"])
    wanted = where.get("heading_path") or ([where["section"]] if "section" in where else [])
    if not wanted:
        return True
    last = _key(str(wanted[-1]))
    return bool(last) and any(
        _key(part).startswith(last) or _key(part).endswith(last) for part in section
    )


# A number as a sheet shows it: 13.9%, $1,414.00, (800.00), 198,905,700, 25.40°.
_SHOWN_NUMBER = re.compile(r"(\()?-?[$€£¥]?\s?(\d[\d,]*(?:\.\d+)?|\.\d+)(%?)")
_STORED_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def holds(chunk: Chunk, item: PlaceItem) -> bool:
    """Whether the chunk holds the item's quote. A place-gold set quotes a sheet's number as
    stored (0.139), and Loupe shows it as the sheet does (13.9%): such a quote is held by a
    number shown from it, to the shown number's precision."""
    if normalise(item.quote) in normalise(chunk.text):
        return True
    if "sheet" not in item.where or not _STORED_NUMBER.fullmatch(item.quote.strip()):
        return False
    stored = float(item.quote)
    for match in _SHOWN_NUMBER.finditer(chunk.text):
        digits = match.group(2).replace(",", "")
        places = len(digits.partition(".")[2])
        value = float(digits) * (-1 if match.group(1) or match.group(0).startswith("-") else 1)
        scale = 100 if match.group(3) else 1
        if abs(value - stored * scale) <= 0.5 * 10**-places + 1e-9:
            return True
    return False


def _gold(chunk: Chunk, item: PlaceItem) -> bool:
    return holds(chunk, item) and at_place(chunk, item.where)


@dataclass
class KindFigures:
    questions: int = 0
    quote_found: int = 0
    place_right: int = 0
    retrieved: dict[int, int] = field(default_factory=lambda: dict.fromkeys(RECALL_AT, 0))
    cited: int = 0
    refused: int = 0
    missed: list[dict[str, Any]] = field(default_factory=list)  # gold place not retrieved
    refusals: list[str] = field(default_factory=list)  # the refused questions' ids
    # Questions the chat model failed to answer (a slow or broken server): counted apart.
    failed: list[dict[str, Any]] = field(default_factory=list)
    read: ReadFigures = field(default_factory=ReadFigures)

    def as_dict(self) -> dict[str, Any]:
        return {
            "questions": self.questions,
            "quote_found": self.quote_found,
            "place_right": self.place_right,
            **{f"retrieved@{n}": count for n, count in self.retrieved.items()},
            "cited": self.cited,
            "refused": self.refused,
            "missed": self.missed,
            "refusals": self.refusals,
            "failed": self.failed,
        } | self.read.as_dict()


def _chunks(notebook: Notebook) -> list[Chunk]:
    return list(
        Chunk.objects.filter(
            source__notebooksource__notebook=notebook,
            embedding_model=embedding_state.active_model(),
        ).order_by("source_id", "ordinal")
    )


def _place(chunk: Chunk) -> str:
    return " › ".join([chunk.page_label or str(chunk.page or ""), *(chunk.section or [])])


def evaluate_places(
    *,
    user: User,
    notebooks: dict[str, Notebook],
    items: Iterable[PlaceItem],
    answers: bool = False,
    on_row: Callable[[dict[str, Any]], None] = lambda row: None,
) -> dict[str, Any]:
    """Ask every question in its file's notebook and score the answers, per kind of file;
    with `answers`, every answer's row too (`answer_row`), under "answers", each also given
    to `on_row` as it is made.

    Every answer is a billed call like any other, at `user`'s expense."""
    chunks = {name: _chunks(notebook) for name, notebook in notebooks.items()}
    by_kind: dict[str, KindFigures] = defaultdict(KindFigures)
    kept = AnswerRows(on_row)
    for item in items:
        figures = by_kind[item.kind]
        figures.questions += 1
        holding = [c for c in chunks[item.file] if holds(c, item)]
        figures.quote_found += bool(holding)
        figures.place_right += any(at_place(chunk, item.where) for chunk in holding)
        asked = ask_item(user, notebooks[item.file], item, figures.failed)
        if asked is None:
            continue
        answer, seconds = asked
        if answers:
            kept.add(answer_row(answer, item, seconds), figures.read)
        passages = [hit.chunk for hit in answer.passages]
        for n in RECALL_AT:
            figures.retrieved[n] += any(_gold(chunk, item) for chunk in passages[:n])
        cited = [c.chunk for c in answer.citations if c.chunk is not None]
        figures.cited += any(_gold(chunk, item) for chunk in cited)
        if answer.message.mode == Message.Mode.REFUSAL:
            figures.refused += 1
            figures.refusals.append(item.id)
        if not any(_gold(chunk, item) for chunk in passages):
            figures.missed.append(
                {
                    "id": item.id,
                    "where": item.where,
                    "retrieved": [_place(chunk) for chunk in passages[:3]],
                }
            )
    result: dict[str, Any] = {
        "kinds": {kind: figures.as_dict() for kind, figures in sorted(by_kind.items())}
    }
    if answers:
        result["answers"] = kept.rows
    return result


def answer_row(answer: Answer, item: PlaceItem, seconds: float) -> dict[str, Any]:
    """One answer as a person reads it (`read_answer`), and the places it cites."""
    cited = [citation.chunk for citation in answer.citations if citation.chunk is not None]
    return {
        "id": item.id,
        "file": item.file,
        "question": item.question,
        **read_answer(answer, seconds),
        "cited_places": [_place(chunk) for chunk in cited],
        "gold": item.where,
        "gold_cited": any(_gold(chunk, item) for chunk in cited),
    }
