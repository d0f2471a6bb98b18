"""Would HyDE (seed 004: a hypothetical answer embedded beside the question) find better
passages for manual-qa's questions, with the local model writing the hypothetical answer?

Per question, in its manual's notebook (the PDFs of ../shared/data/manual-qa, ready sources
in the data folder, as `manage.py evaluate --pages` leaves them):

- the search as Loupe runs it: the question's vector;
- HyDE: the chat model writes the passage that would answer (two or three sentences, in the
  question's language), embedded as a passage; the search's vector is the normalised sum of
  the question's and that passage's; the words searched stay the question's.

Both searches read the same question vector; the figures are the gold page among the 8
@1/4/8 and MRR (as `evaluate --pages` counts the gold page), and the seconds the model took
to write the hypothetical answer: the time a reader would wait before any evidence.

The chat model: CHAT_BASE_URL/CHAT_MODEL when set (a running `serve`'s local model), else
the local model server started here.

    LOUPE_DATA_DIR=/tmp/loupe-eval .venv/bin/python bench/hyde.py [--questions 60]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _setup import SHARED, django_setup, local_model_server  # noqa: E402

K = 8
RECALL_AT = (1, 4, 8)
HYPOTHETICAL_TOKENS = 120
SYSTEM = (
    "Write the passage of the manual that answers the question: two or three factual "
    "sentences, in the question's language, as the manual would state them. No preamble."
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--questions", type=int, default=0, help="the first N (0: all)")
    arguments = parser.parse_args()
    django_setup()

    from django.conf import settings

    if settings.CHAT_BASE_URL and settings.CHAT_MODEL:
        run(arguments)
        return
    with local_model_server():
        run(arguments)


def run(arguments: argparse.Namespace) -> None:
    from evaluation.pages import load_page_items
    from library import embedding_state
    from library.models import Source
    from notebooks.models import Notebook, NotebookSource
    from providers import embeddings
    from providers.chat import chat
    from retrieval.services import search

    items = load_page_items(SHARED / "manual-qa" / "questions.jsonl")
    if arguments.questions:
        items = items[: arguments.questions]
    model = embedding_state.active()
    notebooks = {}
    for doc in sorted({item.doc for item in items}):
        source = Source.objects.filter(filename=doc, status=Source.Status.READY).first()
        if source is None:
            sys.exit(f"{doc} is not a ready source here: run `manage.py evaluate --pages` first")
        notebook, _ = Notebook.objects.get_or_create(owner=source.owner, title=f"HyDE bench {doc}")
        NotebookSource.objects.get_or_create(
            notebook=notebook, source=source, defaults={"added_by": source.owner}
        )
        notebooks[doc] = notebook

    def rank(hits, pages) -> int | None:
        for index, hit in enumerate(hits, start=1):
            if hit.chunk.page in pages:
                return index
        return None

    rows: list[dict[str, Any]] = []
    for item in items:
        notebook = notebooks[item.doc]
        user = notebook.owner
        question = np.array(embeddings.embed_query(item.question, user=user, model=model))
        plain = search(notebook=notebook, question=item.question, query_vector=list(question), k=K)
        started = time.perf_counter()
        reply = chat(
            [{"role": "system", "content": SYSTEM}, {"role": "user", "content": item.question}],
            user=user,
            temperature=0.0,
            max_tokens=HYPOTHETICAL_TOKENS,
        )
        seconds = time.perf_counter() - started
        passage = np.array(embeddings.embed_texts([reply.text], user=user, model=model)[0])
        both = question + passage
        both /= np.linalg.norm(both)
        hyde = search(notebook=notebook, question=item.question, query_vector=list(both), k=K)
        row = {
            "id": item.id,
            "lang": item.lang,
            "plain": rank(plain, item.pages),
            "hyde": rank(hyde, item.pages),
            "seconds": round(seconds, 1),
        }
        rows.append(row)
        print(f"{json.dumps(row)}  {reply.text[:160]!r}", flush=True)

    def figures(name: str, lang: str | None) -> dict[str, Any]:
        ranks = [row[name] for row in rows if lang in (None, row["lang"])]
        found = {f"@{n}": sum(1 for r in ranks if r and r <= n) for n in RECALL_AT}
        return found | {"mrr": round(sum(1 / r for r in ranks if r) / len(ranks), 4)}

    summary: dict[str, Any] = {
        "questions": len(rows),
        "hyde_seconds_p50": statistics.median(row["seconds"] for row in rows),
        "hyde_seconds_max": max(row["seconds"] for row in rows),
    }
    for lang in sorted({row["lang"] for row in rows}):
        summary[lang] = {"plain": figures("plain", lang), "hyde": figures("hyde", lang)}
    summary["all"] = {"plain": figures("plain", None), "hyde": figures("hyde", None)}
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
