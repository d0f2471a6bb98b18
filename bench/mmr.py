"""Would MMR (maximal marginal relevance, seed 004) give answers better passages? The 8
passages re-chosen from the search's best 30 by λ·relevance − (1 − λ)·the cosine similarity
to the most similar passage already chosen, against the search's own 8. Relevance is the
search's own order (1 for its first, falling evenly to 0 past its 30th: the hybrid
ranking's fused score has no fixed scale), so λ = 1 is the search itself; on covid-qa-dev (recall@k
of the chunk holding the answer, MRR). Every variant reads the same candidates and the same
question vectors (embedded once), so only the choice differs.

    LOUPE_DATA_DIR=/tmp/loupe-eval .venv/bin/python bench/mmr.py [--lambdas 0.5,0.7,0.85]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _setup import SHARED, django_setup  # noqa: E402

CANDIDATES = 30
K = 8


def mmr(hits: list, vectors: dict[int, np.ndarray], lam: float) -> list:
    """The K hits chosen one by one for relevance less redundancy."""
    relevance = {hit.chunk.pk: 1 - rank / len(hits) for rank, hit in enumerate(hits)}
    chosen: list = []
    left = list(hits)
    while left and len(chosen) < K:

        def score(hit) -> float:
            vector = vectors[hit.chunk.pk]
            redundancy = max((float(vector @ vectors[c.chunk.pk]) for c in chosen), default=0.0)
            return lam * relevance[hit.chunk.pk] - (1 - lam) * redundancy

        best = max(left, key=score)
        chosen.append(best)
        left.remove(best)
    return chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lambdas", default="0.5,0.7,0.85")
    parser.add_argument("--items", default=str(SHARED / "qa" / "covid-qa-dev" / "items.jsonl"))
    arguments = parser.parse_args()
    django_setup()

    from evaluation.recall import evaluate, load_items
    from library import embedding_state
    from library.models import Chunk
    from notebooks.models import Notebook
    from providers import embeddings
    from retrieval.services import search

    items = load_items(Path(arguments.items))
    notebook = Notebook.objects.filter(title__startswith="evaluate ").order_by("-pk").first()
    if notebook is None:
        sys.exit("no evaluation notebook here: run `manage.py evaluate` on the items first")
    user = notebook.owner
    model = embedding_state.active()
    vectors = {
        item.question: embeddings.embed_query(item.question, user=user, model=model)
        for item in items
    }
    candidates = {
        item.question: search(
            notebook=notebook,
            question=item.question,
            query_vector=vectors[item.question],
            k=CANDIDATES,
        )
        for item in items
    }
    ids = {hit.chunk.pk for hits in candidates.values() for hit in hits}
    chunk_vectors = {}
    for pk, embedding in Chunk.objects.filter(pk__in=ids).values_list("pk", "embedding"):
        vector = np.asarray(embedding, dtype=np.float32)
        chunk_vectors[pk] = vector / np.linalg.norm(vector)

    def plain(item, vector):
        return candidates[item.question][:K]

    results = {
        "search": evaluate(
            user=user, notebook=notebook, items=items, k=K, vectors=vectors, search_function=plain
        )
    }
    for lam in [float(value) for value in arguments.lambdas.split(",")]:

        def chosen(item, vector, lam=lam):
            return mmr(candidates[item.question], chunk_vectors, lam)

        results[f"mmr λ={lam}"] = evaluate(
            user=user, notebook=notebook, items=items, k=K, vectors=vectors, search_function=chosen
        )
    summary = {
        name: {
            "recall": {n: round(r, 4) for n, r in report.recall.items()},
            "mrr": round(report.mrr, 4),
        }
        for name, report in results.items()
    }
    print(json.dumps({"questions": len(items), "results": summary}, indent=1))


if __name__ == "__main__":
    main()
