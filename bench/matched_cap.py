"""The cap on a large notebook's full-text matches (retrieval/search.py, MATCHED_MOST), A/B:
the same questions through each cap in turn (the order rotated per question, after one
untimed pass), p50 / p95 and the median per-question ratio to the first cap, and recall@8
against the exact hybrid ranking (the notebook's vectors and words read whole). A machine
shared with other work moves every figure; the ratios, taken in one run, are what compare.

    LOUPE_DATA_DIR=/tmp/loupe-bench .venv/bin/python bench/matched_cap.py \\
        [--size 1000000] [--caps 1000000000,16000] [--queries 30]

The set is bench/retrieval_latency.py's (built there, `--million` for 1M chunks); the exact
rankings, seconds each at a million, are kept in the data folder for later runs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import retrieval_latency as latency  # noqa: E402
from _setup import django_setup  # noqa: E402

DIMS = 384


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--caps", default="1000000000,16000", help="MATCHED_MOST values")
    parser.add_argument("--queries", type=int, default=30)
    args = parser.parse_args()
    django_setup()
    from django.conf import settings

    from notebooks.models import Notebook
    from retrieval import search

    model = latency.model_name(args.size, DIMS)
    notebook = Notebook.objects.get(owner__username=f"bench-{DIMS}-{args.size}", title="all")
    rng = np.random.default_rng(3)  # retrieval_latency's questions
    questions = [json.loads(line)["question"] for line in (latency.QA / "items.jsonl").open()]
    vectors = [v.tolist() for v in latency.embedding_like(rng, args.queries, DIMS)]
    asked = [questions[int(i)] for i in rng.integers(0, len(questions), args.queries)]
    caps = [int(c) for c in args.caps.split(",")]
    exact_max, index_min_chunks = settings.RETRIEVAL_EXACT_MAX_CHUNKS, search.INDEX_MIN_CHUNKS

    def run(vector: list[float], question: str, *, cap: int | None) -> tuple[float, list[int]]:
        """One hybrid search with MATCHED_MOST `cap`, or exact (None)."""
        exact = cap is None
        settings.RETRIEVAL_EXACT_MAX_CHUNKS = 10**12 if exact else exact_max
        search.INDEX_MIN_CHUNKS = 10**12 if exact else index_min_chunks
        search.MATCHED_MOST = cap or search.MATCHED_MOST
        elapsed, hits = latency.timed(
            search.search_notebook_hybrid,
            notebook=notebook,
            question=question,
            query_vector=vector,
            model=model,
            k=latency.K,
        )
        return elapsed, [hit.chunk.pk for hit in hits]

    kept = Path(os.environ["LOUPE_DATA_DIR"]) / f"matched_cap-exact-{args.size}.json"
    exact = json.loads(kept.read_text()) if kept.exists() else {}
    for vector, question in zip(vectors, asked, strict=True):
        key = f"{question}|{vector[0]:.6f}"
        if key not in exact:
            exact[key] = run(vector, question, cap=None)[1]
            kept.write_text(json.dumps(exact))
    truths = [exact[f"{q}|{v[0]:.6f}"] for v, q in zip(vectors, asked, strict=True)]

    for cap in caps:
        for vector, question in zip(vectors, asked, strict=True):
            run(vector, question, cap=cap)
    load = os.getloadavg()
    seconds: dict[int, list[float]] = {cap: [] for cap in caps}
    recalls: dict[int, list[float]] = {cap: [] for cap in caps}
    for index, (vector, question) in enumerate(zip(vectors, asked, strict=True)):
        turn = index % len(caps)
        for cap in caps[turn:] + caps[:turn]:
            elapsed, found = run(vector, question, cap=cap)
            seconds[cap].append(elapsed)
            recalls[cap].append(latency.overlap(truths[index], found))
    first = caps[0]
    for cap in caps:
        p50, p95 = latency.percentiles(seconds[cap])
        ratio = statistics.median(a / b for a, b in zip(seconds[cap], seconds[first], strict=True))
        print(
            json.dumps(
                {
                    "bench": "matched_cap",
                    "chunks": args.size,
                    "matched_most": cap,
                    "hybrid": [round(p50, 1), round(p95, 1)],
                    "slowest_ms": round(max(seconds[cap]) * 1000, 1),
                    "median_ratio": round(ratio, 3),
                    "hybrid_recall@8": round(statistics.mean(recalls[cap]), 3),
                    "load": [round(load[0], 1), round(os.getloadavg()[0], 1)],
                }
            ),
            flush=True,
        )


if __name__ == "__main__":
    main()
