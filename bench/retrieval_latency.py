"""Retrieval latency (issue 6, item 3, first step): question -> ranked passages at 10k
chunks of 384 dimensions, exact scan (no vector index), embedding excluded. p50/p95 of
the dense search (retrieval.search.search_notebook) and of the hybrid one (dense + full
text fused in one statement), over 100 random query vectors and covid-qa questions.

The 10k chunks (real covid-qa text, random unit vectors) are inserted once into the bench
database and reused by later runs.

    LOUPE_DATA_DIR=/tmp/loupe-bench .venv/bin/python bench/retrieval_latency.py [--chunks 10000]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _setup import SHARED, django_setup  # noqa: E402

if TYPE_CHECKING:
    from notebooks.models import Notebook

QA = SHARED / "qa" / "covid-qa-dev"
DIMENSIONS = 384
MODEL = "bench/random-384"
QUERIES = 100


def unit_vector(rng: random.Random) -> list[float]:
    vector = [rng.gauss(0.0, 1.0) for _ in range(DIMENSIONS)]
    norm = sum(value * value for value in vector) ** 0.5
    return [value / norm for value in vector]


def bench_notebook(count: int) -> Notebook:
    """A notebook with one ready source of `count` chunks, made on the first run."""
    from django.contrib.auth import get_user_model
    from django.contrib.postgres.search import SearchVector
    from django.db import transaction

    from ingest.chunker import chunk_passages
    from ingest.passages import Passage
    from library.models import Chunk, Source
    from notebooks.models import Notebook, NotebookSource

    owner, _ = get_user_model().objects.get_or_create(username=f"bench-retrieval-{count}")
    notebook, _ = Notebook.objects.get_or_create(owner=owner, title=f"{count} chunks")
    source = Source.objects.filter(owner=owner, status=Source.Status.READY).first()
    if source and source.chunk_count == count:
        return notebook
    texts: list[str] = []
    for path in sorted((QA / "docs").glob("*.txt")):
        texts.extend(d.text for d in chunk_passages([Passage(text=path.read_text())], window=120))
    rng = random.Random(6)
    started = time.perf_counter()
    with transaction.atomic():
        Source.objects.filter(owner=owner).delete()
        source = Source.objects.create(
            owner=owner,
            kind=Source.Kind.TEXT,
            title="bench",
            filename="bench.txt",
            sha256=f"bench-{count}",
            status=Source.Status.READY,
            chunk_count=count,
            search_config="english",
        )
        NotebookSource.objects.create(notebook=notebook, source=source)
        for start in range(0, count, 1000):
            Chunk.objects.bulk_create(
                Chunk(
                    source=source,
                    ordinal=ordinal,
                    text=(text := texts[ordinal % len(texts)]),
                    char_start=0,
                    char_end=len(text),
                    embedding=unit_vector(rng),
                    embedding_model=MODEL,
                )
                for ordinal in range(start, min(start + 1000, count))
            )
        Chunk.objects.filter(source=source).update(
            search_vector=SearchVector("text", config="english")
        )
    print(f"inserted {count} chunks in {time.perf_counter() - started:.1f} s")
    return notebook


def percentiles(seconds: list[float]) -> tuple[float, float]:
    ordered = sorted(seconds)
    return (
        statistics.median(ordered) * 1000,
        ordered[min(len(ordered) - 1, round(0.95 * len(ordered)) - 1)] * 1000,
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=10_000)
    args = parser.parse_args()
    django_setup()
    from django.db import connection

    from retrieval.search import search_notebook, search_notebook_hybrid

    notebook = bench_notebook(args.chunks)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE library_chunk")
    rng = random.Random(3)
    questions = [json.loads(line)["question"] for line in (QA / "items.jsonl").open()]
    queries = [(unit_vector(rng), rng.choice(questions)) for _ in range(QUERIES)]
    timings: dict[str, list[float]] = {"dense": [], "hybrid": []}
    for vector, _question in queries[:5]:  # warm the caches
        search_notebook(notebook=notebook, query_vector=vector, model=MODEL)
    for vector, question in queries:
        started = time.perf_counter()
        hits = search_notebook(notebook=notebook, query_vector=vector, model=MODEL)
        timings["dense"].append(time.perf_counter() - started)
        assert len(hits) == 8
        started = time.perf_counter()
        search_notebook_hybrid(
            notebook=notebook, question=question, query_vector=vector, model=MODEL
        )
        timings["hybrid"].append(time.perf_counter() - started)
    summary: dict[str, object] = {"bench": "retrieval_latency", "chunks": args.chunks}
    print(f"{args.chunks} chunks x {DIMENSIONS} dims, exact scan, {QUERIES} queries, k=8")
    for name, seconds in timings.items():
        p50, p95 = percentiles(seconds)
        print(f"{name:7} p50 {p50:6.1f} ms   p95 {p95:6.1f} ms")
        summary[f"{name}_p50_ms"] = round(p50, 1)
        summary[f"{name}_p95_ms"] = round(p95, 1)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
