"""Tune hybrid ranking on a question set: embed every question once, then try fusions.

    LOUPE_DATA_DIR=... .venv/bin/python bench/tune_hybrid.py --user eval \
        --notebook covid-qa-dev --qa ../shared/data/qa/covid-qa-dev/items.jsonl

The notebook must hold the set's documents already (`manage.py ingest`). Prints one line of
figures per setting. Tune only on covid-qa-dev, the development set. It tries what the
product can run (the weighted fusion over ts_rank); reciprocal rank fusion, an idf-weighted
full-text score and holding the full-text side to the floor lost and were taken out of the
product (docs/retrieval.md, with their figures).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402

from evaluation.recall import evaluate, load_items  # noqa: E402
from library import embedding_state  # noqa: E402
from notebooks.models import Notebook  # noqa: E402
from providers import embeddings  # noqa: E402
from retrieval import profiles  # noqa: E402
from retrieval.search import Fusion, search_notebook, search_notebook_hybrid  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--user", required=True)
    parser.add_argument("--notebook", required=True)
    parser.add_argument("--qa", required=True, type=Path)
    parser.add_argument("--k", type=int, default=8)
    parser.add_argument("--weights", default="0,0.2,0.3,0.4,0.5")
    parser.add_argument("--candidates", default="50")
    parser.add_argument("--proximity-weights", default="0.3")
    parser.add_argument("--floors", default="none,model", help="none, model or a number")
    args = parser.parse_args()

    notebook = Notebook.objects.get(owner__username=args.user, title=args.notebook)
    items = load_items(args.qa)
    active = embedding_state.active()
    model = active.name
    cache = Path(settings.DATA_DIR) / f"question-vectors-{model.replace('/', '_')}.json"
    vectors: dict[str, list[float]] = json.loads(cache.read_text()) if cache.exists() else {}
    missing = [item.question for item in items if item.question not in vectors]
    for question in missing:
        vectors[question] = embeddings.embed_query(question, user=notebook.owner, model=active)
    if missing:
        cache.write_text(json.dumps(vectors))

    def report(name: str, search_function) -> None:
        figures = evaluate(
            user=notebook.owner,
            notebook=notebook,
            items=items,
            k=args.k,
            vectors=vectors,
            search_function=search_function,
        ).as_dict()
        shown = {
            key: figures[key]
            for key in (
                "recall@1",
                "recall@4",
                "recall@8",
                "mrr@8",
                "search_p95_ms",
                "unanswerable",
                "chunks",
            )
            if key in figures
        }
        print(f"{name:60} {json.dumps(shown)}", flush=True)

    floors = [
        None
        if floor == "none"
        else profiles.similarity_floor(model)
        if floor == "model"
        else float(floor)
        for floor in args.floors.split(",")
    ]
    for floor in floors:
        report(
            f"dense floor={floor}",
            lambda item, vector, floor=floor: search_notebook(
                notebook=notebook, query_vector=vector, model=model, k=args.k, floor=floor
            ),
        )
    settings_grid = [
        Fusion(dense_weight=weight, candidates=candidates, proximity_weight=proximity_weight)
        for weight in [float(w) for w in args.weights.split(",")]
        for proximity_weight in [float(w) for w in args.proximity_weights.split(",")]
        for candidates in [int(c) for c in args.candidates.split(",")]
    ]
    for floor in floors:
        for fusion in settings_grid:
            report(
                f"hybrid floor={floor} {fusion}".replace("Fusion", ""),
                lambda item, vector, floor=floor, fusion=fusion: search_notebook_hybrid(
                    notebook=notebook,
                    question=item.question,
                    query_vector=vector,
                    model=model,
                    k=args.k,
                    floor=floor,
                    fusion=fusion,
                ),
            )


if __name__ == "__main__":
    main()
