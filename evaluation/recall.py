"""Measuring retrieval on a question set: recall@n, MRR and latency (`manage.py evaluate`).

A question counts as found at rank r when the r-th retrieved chunk contains its gold answer
(`answers[0]`, case-sensitive, whitespace runs collapsed on both sides). A question whose
answer no chunk of the notebook contains (it straddles two chunks) can never be found; it
is counted as a miss, and reported as `unanswerable`, so that figures of two chunkings
compare on the same questions.

Follow-up questions (FOLLOWUPS.jsonl: earlier turns, a follow-up and its answer) measure
query rewriting: each is searched as asked and as the chat model rewrites it
(generation/rewrite.py), and both are scored the same way.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.contrib.auth.models import User
from django.core.files import File

from generation.rewrite import rewrite_query
from ingest.services import add_source
from ingest.waiting import wait_for_sources
from library import embedding_state
from library.models import Chunk, Source
from notebooks.models import Notebook
from providers import embeddings
from providers.chat import chat_available
from retrieval import coverage
from retrieval.search import Hit, scope_params
from retrieval.services import search

RECALL_AT = (1, 4, 8)
SPACE_RE = re.compile(r"\s+")


class EvaluationError(Exception):
    """The question set or its documents cannot be evaluated; the message says why."""


@dataclass(frozen=True)
class QaItem:
    doc_id: str
    question: str
    answer: str


@dataclass
class Report:
    k: int
    questions: int
    chunks: int
    unanswerable: int
    recall: dict[int, float]
    # Questions the answer path would refuse as not covered (retrieval/coverage.py); every
    # question of a QA set is answerable, so each is a wrong refusal.
    refused: int
    mrr: float
    latency_ms: list[float] = field(repr=False)
    search_latency_ms: list[float] = field(repr=False)

    def as_dict(self) -> dict[str, Any]:
        figures: dict[str, Any] = {f"recall@{n}": round(r, 4) for n, r in self.recall.items()}
        figures[f"mrr@{self.k}"] = round(self.mrr, 4)
        figures.update(
            questions=self.questions,
            chunks=self.chunks,
            unanswerable=self.unanswerable,
            refused=self.refused,
            k=self.k,
            # With the question's embedding: what a person waits for.
            p50_ms=round(percentile(self.latency_ms, 50), 1),
            p95_ms=round(percentile(self.latency_ms, 95), 1),
            # The SQL search alone.
            search_p50_ms=round(percentile(self.search_latency_ms, 50), 1),
            search_p95_ms=round(percentile(self.search_latency_ms, 95), 1),
        )
        return figures


def normalise(text: str) -> str:
    return SPACE_RE.sub(" ", text).strip()


def percentile(values: list[float], pct: float) -> float:
    """Nearest-rank percentile (0 for no values)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, math.ceil(pct / 100 * len(ordered)))
    return ordered[rank - 1]


def load_items(path: Path) -> list[QaItem]:
    """Read ITEMS.jsonl: one {"doc_id", "question", "answers": [...]} object per line."""
    items = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            items.append(
                QaItem(
                    doc_id=str(row["doc_id"]), question=row["question"], answer=row["answers"][0]
                )
            )
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise EvaluationError(
                f"{path}, line {number}: expected doc_id, question and answers ({exc})."
            ) from exc
    if not items:
        raise EvaluationError(f"{path} holds no questions.")
    return items


@dataclass(frozen=True)
class FollowupItem:
    doc_id: str
    turns: tuple[tuple[str, str], ...]  # (role, text), oldest first
    question: str
    answer: str


def load_followups(path: Path) -> list[FollowupItem]:
    """Read FOLLOWUPS.jsonl: one {"doc_id", "turns": [{"role": "user" | "assistant",
    "content"}, ...], "question", "answers": [...]} object per line, `question` being the
    follow-up asked after the turns."""
    items = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            turns = tuple((turn["role"], turn["content"]) for turn in row["turns"])
            if not turns or any(
                role not in {"user", "assistant"} or not isinstance(text, str)
                for role, text in turns
            ):
                raise ValueError("turns must be a non-empty list of user/assistant turns")
            items.append(
                FollowupItem(
                    doc_id=str(row["doc_id"]),
                    turns=turns,
                    question=row["question"],
                    answer=row["answers"][0],
                )
            )
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise EvaluationError(
                f"{path}, line {number}: expected doc_id, turns (role and content), question "
                f"and answers ({exc})."
            ) from exc
    if not items:
        raise EvaluationError(f"{path} holds no questions.")
    return items


def ingest_documents(
    *, user: User, notebook: Notebook, docs: Path, doc_ids: Iterable[str]
) -> list[Source]:
    """Add DIR/<doc_id>.txt for every id through the normal pipeline and wait for them; an
    id that names a file in DIR itself ("debian-reference.en.pdf") adds that file.

    Documents the user added before are linked, not embedded again.
    """
    added = []
    for doc_id in sorted(set(doc_ids)):
        path = docs / doc_id
        if not path.is_file():
            path = docs / f"{doc_id}.txt"
        if not path.is_file():
            raise EvaluationError(f"{path}: no such document.")
        with path.open("rb") as handle:
            added.append(
                add_source(owner=user, notebook=notebook, upload=File(handle, path.name)).source
            )
    sources = wait_for_sources(source.pk for source in added)
    failed = [source for source in sources if source.status != Source.Status.READY]
    if failed:
        raise EvaluationError(
            "Some documents failed: "
            + "; ".join(f"{source.filename}: {source.error}" for source in failed)
        )
    return sources


def notebook_chunks(notebook: Notebook) -> dict[int, str]:
    """Normalised text of every chunk a search of the notebook can return."""
    chunks = Chunk.objects.filter(
        source__notebooksource__notebook=notebook,
        source__status=Source.Status.READY,
        embedding_model=embedding_state.active_model(),
    ).values_list("id", "text")
    return {chunk_id: normalise(text) for chunk_id, text in chunks}


SearchFunction = Callable[[QaItem, list[float]], list[Hit]]


def evaluate(
    *,
    user: User,
    notebook: Notebook,
    items: list[QaItem],
    k: int = 8,
    vectors: dict[str, list[float]] | None = None,
    search_function: SearchFunction | None = None,
) -> Report:
    """Run every question through the normal retrieval path and score the hits.

    `vectors` (question → embedding) and `search_function` let a benchmark reuse
    embeddings while it tries other search settings; its embedding latency is then 0.
    """
    chunks = notebook_chunks(notebook)
    if not chunks:
        raise EvaluationError("The notebook has no chunks of the active embedding model.")

    def default_search(item: QaItem, vector: list[float]) -> list[Hit]:
        return search(notebook=notebook, question=item.question, query_vector=vector, k=k)

    run = search_function or default_search
    found_at = []
    unanswerable = refused = 0
    active = embedding_state.active()
    model = active.name
    latency, search_latency = [], []
    for item in items:
        answer = normalise(item.answer)
        gold = {chunk_id for chunk_id, text in chunks.items() if answer in text}
        unanswerable += not gold
        started = time.perf_counter()
        if vectors is not None and item.question in vectors:
            vector = vectors[item.question]
        else:
            vector = embeddings.embed_query(item.question, user=user, model=active)
        embedded = time.perf_counter()
        hits = run(item, vector)[:k]
        finished = time.perf_counter()
        latency.append((finished - started) * 1000)
        search_latency.append((finished - embedded) * 1000)
        ranks = [rank for rank, hit in enumerate(hits, start=1) if hit.chunk.pk in gold]
        found_at.append(ranks[0] if ranks else None)
        refused += not coverage.assess(
            question=item.question,
            hits=hits,
            query_vector=vector,
            model=model,
            scope=scope_params(notebook=notebook),
        ).covered

    questions = len(items)
    return Report(
        k=k,
        questions=questions,
        chunks=len(chunks),
        unanswerable=unanswerable,
        refused=refused,
        recall={
            n: sum(1 for rank in found_at if rank is not None and rank <= n) / questions
            for n in sorted({*RECALL_AT, k})
            if n <= k
        },
        mrr=sum(1 / rank for rank in found_at if rank is not None) / questions,
        latency_ms=latency,
        search_latency_ms=search_latency,
    )


@dataclass
class FollowupReport:
    """The follow-up questions searched as asked (rewrite off) and as rewritten (on)."""

    off: Report
    on: Report
    rewritten: int  # questions the rewrite changed
    failures: int  # rewrites that failed and fell back to the question
    rewrite_latency_ms: list[float] = field(repr=False)

    def as_dict(self) -> dict[str, Any]:
        on = self.on.as_dict()
        on.update(
            rewritten=self.rewritten,
            rewrite_failures=self.failures,
            # The rewrite's chat call alone, on top of p50_ms/p95_ms.
            rewrite_p50_ms=round(percentile(self.rewrite_latency_ms, 50), 1),
            rewrite_p95_ms=round(percentile(self.rewrite_latency_ms, 95), 1),
        )
        return {"rewrite_off": self.off.as_dict(), "rewrite_on": on}


def require_chat_model() -> None:
    """Follow-up questions measure query rewriting, which only a chat model does."""
    if not chat_available():
        raise EvaluationError(
            "--followups measures query rewriting, which needs a chat model: set "
            "OPENAI_BASE_URL and CHAT_MODEL."
        )


def evaluate_followups(
    *, user: User, notebook: Notebook, items: list[FollowupItem], k: int = 8
) -> FollowupReport:
    """Search every follow-up twice, as asked and rewritten from its turns by the chat
    model (generation/rewrite.py), whatever RETRIEVAL_QUERY_REWRITE says, and score both.
    The rewrite calls are billed to `user` like any chat call."""
    require_chat_model()
    asked = [
        QaItem(doc_id=item.doc_id, question=item.question, answer=item.answer) for item in items
    ]
    off = evaluate(user=user, notebook=notebook, items=asked, k=k)
    rewritten, failures, latency = [], 0, []
    for item in items:
        started = time.perf_counter()
        rewrite = rewrite_query(question=item.question, turns=item.turns, user=user)
        latency.append((time.perf_counter() - started) * 1000)
        failures += rewrite.failure is not None
        rewritten.append(QaItem(doc_id=item.doc_id, question=rewrite.query, answer=item.answer))
    on = evaluate(user=user, notebook=notebook, items=rewritten, k=k)
    return FollowupReport(
        off=off,
        on=on,
        rewritten=sum(
            1
            for item, query in zip(items, rewritten, strict=True)
            if query.question != item.question
        ),
        failures=failures,
        rewrite_latency_ms=latency,
    )
