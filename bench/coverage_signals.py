"""Dump, per question, what the search knows about whether the sources cover it.

    LOUPE_DATA_DIR=... .venv/bin/python bench/coverage_signals.py \
        --pages ../shared/data/manual-qa/questions.jsonl \
        --offtopic ../shared/data/manual-qa/offtopic.jsonl --docs ../shared/data/manual-qa
    LOUPE_DATA_DIR=... .venv/bin/python bench/coverage_signals.py \
        --qa ../shared/data/qa/covid-qa-dev/items.jsonl --docs ../shared/data/qa/covid-qa-dev/docs
    LOUPE_DATA_DIR=... .venv/bin/python bench/coverage_signals.py \
        --places ../shared/data/formats/questions.jsonl --docs ../shared/data/formats

The documents must have been read by `manage.py evaluate` (user `evaluate`) before: they are
linked into fresh notebooks, not read again. One JSON line per question: its set (`on`,
`off`), language, the signals of retrieval/coverage.py (best similarity, word share) and
the decision, and for page-gold questions the rank of the first gold page among the hits.
This is the data the thresholds in retrieval/coverage.py were chosen from (docs/retrieval.md).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from _setup import django_setup

django_setup()

from django.contrib.auth.models import User  # noqa: E402

from evaluation.pages import ingest_pdfs, load_offtopic, load_page_items  # noqa: E402
from evaluation.places import load_place_items  # noqa: E402
from evaluation.recall import ingest_documents, load_items  # noqa: E402
from library import embedding_state  # noqa: E402
from notebooks.models import Notebook  # noqa: E402
from providers import embeddings  # noqa: E402
from retrieval import coverage  # noqa: E402
from retrieval.search import scope_params  # noqa: E402
from retrieval.services import search  # noqa: E402


def signals(notebook: Notebook, question: str, user: User) -> tuple[list, dict]:
    active = embedding_state.active()
    model = active.name
    vector = embeddings.embed_query(question, user=user, model=active)
    hits = search(notebook=notebook, question=question, query_vector=vector, model=model)
    scope = scope_params(notebook=notebook)
    found = coverage.assess(
        question=question, hits=hits, query_vector=vector, model=model, scope=scope
    )
    # Both signals, also the one that did not decide (assess asks only for what decides).
    similarity, counts = coverage.signals(
        question=question, hits=hits, query_vector=vector, model=model, scope=scope
    )
    return hits, {
        "similarity": similarity and round(similarity, 4),
        "top": hits and round(hits[0].similarity, 4),
        "words": round(coverage.word_share(counts), 4),
        # The alternatives measured beside it: unweighted shares of the question's lexemes
        # in the hits and anywhere in the sources.
        "in_hits": _share(counts, lambda row: row[4] > 0),
        "in_sources": _share(counts, lambda row: row[3] > 0),
        "lexemes": [row[1] for row in counts if row[4] == 0],
        "covered": found.covered,
    }


def _share(counts: list, found) -> float:
    by_config: dict[str, list[bool]] = {}
    for row in counts:
        by_config.setdefault(row[0], []).append(found(row))
    return round(max((sum(v) / len(v) for v in by_config.values()), default=1.0), 3)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=Path)
    parser.add_argument("--offtopic", type=Path)
    parser.add_argument("--qa", type=Path)
    parser.add_argument("--places", type=Path)
    parser.add_argument("--docs", type=Path, required=True)
    args = parser.parse_args()
    user = User.objects.get(username="evaluate")
    if args.qa:
        qa_items = load_items(args.qa)
        notebook = Notebook.objects.create(owner=user, title="coverage signals")
        ingest_documents(
            user=user, notebook=notebook, docs=args.docs, doc_ids=[i.doc_id for i in qa_items]
        )
        for qa in qa_items:
            _, row = signals(notebook, qa.question, user)
            print(json.dumps({"set": "on", "lang": "en", "question": qa.question, **row}))
        notebook.delete()
        return
    if args.places:
        place_items = load_place_items(args.places)
        notebooks = ingest_pdfs(user=user, docs=args.docs, names={i.file for i in place_items})
        try:
            for place in place_items:
                hits, row = signals(notebooks[place.file], place.question, user)
                words = [len(hit.chunk.text.split()) for hit in hits]
                print(
                    json.dumps(
                        {
                            "set": "on",
                            "id": place.id,
                            "lang": place.lang,
                            "kind": place.kind,
                            "hit_words": words,
                            **row,
                        },
                        ensure_ascii=False,
                    )
                )
                sys.stdout.flush()
        finally:
            for notebook in notebooks.values():
                notebook.delete()
        return
    page_items = load_page_items(args.pages)
    offtopic = load_offtopic(args.offtopic) if args.offtopic else []
    notebooks = ingest_pdfs(
        user=user,
        docs=args.docs,
        names={item.doc for item in page_items} | {off.doc for off in offtopic},
    )
    try:
        for item in page_items:
            hits, row = signals(notebooks[item.doc], item.question, user)
            pages = [hit.chunk.page for hit in hits]
            rank = next((n for n, page in enumerate(pages, 1) if page in item.pages), None)
            print(json.dumps({"set": "on", "id": item.id, "lang": item.lang, "rank": rank, **row}))
            sys.stdout.flush()
        for off in offtopic:
            _, row = signals(notebooks[off.doc], off.question, user)
            print(json.dumps({"set": "off", "lang": off.lang, "question": off.question, **row}))
    finally:
        for notebook in notebooks.values():
            notebook.delete()


if __name__ == "__main__":
    main()
