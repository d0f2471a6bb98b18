"""Reading the offline (extractive) answers to manual-qa's questions as a user would.

For each question of `../shared/data/manual-qa/questions.jsonl`: the question, the gold
quote, the pages retrieved, and the extractive answer made from those passages (rendered as
stored, markers renumbered), with whether it cites a gold page and what share of the gold
quote's content words it holds. Nothing is stored: the search and the answerer run as the
answer path runs them (generation/answering/), without the chat model.

It links the manuals `manage.py evaluate --pages` read into the `evaluate` user's library
in the same data folder (fresh notebooks, deleted at the end), so run that command there
once first (it reads and embeds them; later runs link them):

    LOUPE_DATA_DIR=DIR .venv/bin/python manage.py evaluate --pages \\
        ../shared/data/manual-qa/questions.jsonl --docs ../shared/data/manual-qa
    LOUPE_DATA_DIR=DIR .venv/bin/python bench/extractive_answers.py [--ids en-01 de-07] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _setup import SHARED, django_setup  # noqa: E402

QUESTIONS = SHARED / "manual-qa" / "questions.jsonl"
HOLDS_QUOTE = 0.6  # share of the gold quote's content words an answer holding it has
EVALUATE_USER = "evaluate"  # manage.py evaluate's default --user


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ids", nargs="*", default=[], help="only these question ids")
    parser.add_argument("--json", action="store_true", help="a one-line JSON summary last")
    args = parser.parse_args()
    django_setup()

    from django.contrib.auth import get_user_model

    from evaluation.pages import ingest_pdfs
    from library.models import Source

    rows = [json.loads(line) for line in QUESTIONS.read_text().splitlines() if line.strip()]
    rows = [row for row in rows if not args.ids or row["id"] in args.ids]
    user = get_user_model().objects.filter(username=EVALUATE_USER).first()
    if user is None or not Source.objects.filter(owner=user).exists():
        sys.exit(
            "The manuals are not in this data folder's library: run `manage.py evaluate "
            "--pages` with the same LOUPE_DATA_DIR first (see this docstring)."
        )
    # Linked, not read again: the same files are already in the user's library.
    notebooks = ingest_pdfs(user=user, docs=QUESTIONS.parent, names={row["doc"] for row in rows})
    try:
        totals = _read_answers(rows, notebooks)
    finally:
        for notebook in notebooks.values():
            notebook.delete()
    print("=" * 100)
    print(
        f"gold page cited {totals['cited']}/{totals['questions']}; answer holds ≥ "
        f"{HOLDS_QUOTE:.0%} of the gold quote's content words {totals['holds_quote']}/"
        f"{totals['questions']}"
    )
    if args.json:
        print(json.dumps(totals))


def _read_answers(rows: list[dict[str, Any]], notebooks: dict[str, Any]) -> dict[str, int]:
    from generation import extractive
    from generation.answering import extractive_passages
    from generation.citations import map_markers
    from language.words import terms
    from retrieval.closeness import part_closeness
    from retrieval.services import retrieve_assessed

    totals = {"questions": 0, "cited": 0, "holds_quote": 0}
    for row in rows:
        notebook = notebooks[row["doc"]]
        retrieved = retrieve_assessed(
            user=notebook.owner, notebook=notebook, question=row["question"], assess=False
        )
        hits = retrieved.hits
        closeness = part_closeness(
            hits=hits, query_vector=retrieved.query_vector, model=retrieved.model
        )
        gold = {row["page"], *row.get("also_answered_on", [])}
        text = (
            extractive.answer(row["question"], extractive_passages(hits, closeness=closeness))
            if hits
            else ""
        )
        mapped = map_markers(text, len(hits))
        cited = [hits[number - 1].chunk.page for number in mapped.order]
        quote_terms = set(terms(row["quote"]))
        share = len(quote_terms & set(terms(text))) / max(len(quote_terms), 1)
        totals["questions"] += 1
        totals["cited"] += bool(gold & set(cited))
        totals["holds_quote"] += share >= HOLDS_QUOTE
        print("=" * 100)
        print(f"{row['id']} {row['question']}")
        print(f"GOLD page {row['page']}: {row['quote']}")
        print(
            f"retrieved pages {[hit.chunk.page for hit in hits]}, cited {cited}, "
            f"gold cited {bool(gold & set(cited))}, quote's words {share:.2f}"
        )
        print("-" * 100)
        print(mapped.text or "(no answer)")
    return totals


if __name__ == "__main__":
    main()
