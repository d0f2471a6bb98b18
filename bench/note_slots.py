"""Should notes made sources be held to the generated-slot rule? Measured on manual-qa.

A notebook holds one of the real manuals. A third of its questions are asked once and their
answers saved to notes that are made sources (the way a person keeps an answer and searches
it again: the note's title is the question, its text the answer's sentences, restating the
manual's passages). Then every question is asked three times, through the normal answer
path: with the notes unticked (no notes), with the notes held to the rule (at most
RETRIEVAL_GENERATED_SLOTS passages, after the manual's), and with the notes ranked like an
upload. Printed per language and per part (the questions with a note, the others): how
often the gold page is among the passages the answer was given (and its reciprocal rank
there) and among its citations, how many passages came from notes, how often a note was
the first passage, and how many answers cite a note.

    LOUPE_DATA_DIR=... .venv/bin/python bench/note_slots.py [--lang en de] [--every 3]

Uses the configured embedding model (the local multilingual-e5-small by default) and answers
extractively unless a chat model is configured. The manuals are read once per data folder.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from typing import Any

from _setup import SHARED, django_setup

MANUALS = SHARED / "manual-qa"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lang", nargs="+", default=["en", "de"])
    parser.add_argument("--every", type=int, default=3, help="a note for every n-th question")
    args = parser.parse_args()
    django_setup()
    from django.contrib.auth import get_user_model
    from django.core.files import File
    from django.utils import timezone

    from generation.answering import answer_question
    from ingest.notes import make_note_a_source
    from ingest.services import add_source, process_source
    from library.models import Source
    from notebooks.models import Notebook
    from notebooks.services import save_answer_as_note
    from retrieval import search

    user, _created = get_user_model().objects.get_or_create(username="bench-note-slots")
    items = [json.loads(line) for line in (MANUALS / "questions.jsonl").open()]
    for lang in args.lang:
        doc = f"debian-reference.{lang}.pdf"
        questions = [item for item in items if item["doc"] == doc]
        notebook = Notebook.objects.create(
            owner=user, title=f"note slots {lang} {timezone.now():%Y-%m-%d %H:%M:%S.%f}"
        )
        started = time.monotonic()
        with (MANUALS / doc).open("rb") as handle:
            manual = add_source(owner=user, notebook=notebook, upload=File(handle, doc)).source
        if manual.status != Source.Status.READY or manual.stage:
            manual = process_source(source_id=manual.pk)
        assert manual.status == Source.Status.READY, manual.error
        print(f"{lang}: manual ready in {time.monotonic() - started:.0f} s")

        noted = {item["id"] for item in questions[:: args.every]}
        for item in questions:
            if item["id"] in noted:
                answer = answer_question(user=user, notebook=notebook, question=item["question"])
                note = save_answer_as_note(user=user, message=answer.message)
                source = process_source(source_id=make_note_a_source(note=note).pk)
                assert source.status == Source.Status.READY, source.error
        print(f"{lang}: {len(noted)} notes made sources")

        conditions: dict[str, tuple[list[int] | None, tuple[str, ...]]] = {
            "no notes": ([manual.pk], search.CAPPED_KINDS),
            "notes, slot rule": (None, search.CAPPED_KINDS),
            "notes, ranked as uploads": (
                None,
                tuple(kind for kind in search.CAPPED_KINDS if kind != Source.Kind.NOTE),
            ),
        }
        for name, (chosen, capped) in conditions.items():
            search.CAPPED_KINDS = capped
            figures: dict[str, dict[str, Any]] = defaultdict(lambda: defaultdict(int))
            for item in questions:
                gold = {item["page"], *item.get("also_answered_on", [])}
                answer = answer_question(
                    user=user, notebook=notebook, question=item["question"], chosen_sources=chosen
                )
                part = figures["with a note" if item["id"] in noted else "without"]
                part["questions"] += 1
                hits = answer.passages
                ranks = [
                    rank
                    for rank, hit in enumerate(hits, start=1)
                    if hit.chunk.source_id == manual.pk and hit.chunk.page in gold
                ]
                part["gold retrieved"] += bool(ranks)
                part["gold mrr"] += 1 / ranks[0] if ranks else 0
                part["note passages"] += sum(hit.chunk.source.kind == "note" for hit in hits)
                part["note first"] += bool(hits) and hits[0].chunk.source.kind == "note"
                cited = [(c.source_id, c.page) for c in answer.citations]
                part["gold cited"] += any(
                    source == manual.pk and page in gold for source, page in cited
                )
                part["cites a note"] += any(
                    source != manual.pk for source, _page in cited if source is not None
                )
            search.CAPPED_KINDS = conditions["no notes"][1]
            for part_name, part in figures.items():
                n = part["questions"]
                print(
                    f"{lang} | {name} | {part_name} ({n}) | gold retrieved@8 "
                    f"{part['gold retrieved'] / n:.2f} | gold MRR@8 {part['gold mrr'] / n:.2f}"
                    f" | gold cited {part['gold cited'] / n:.2f}"
                    f" | note passages/question {part['note passages'] / n:.1f}"
                    f" | note first {part['note first'] / n:.2f}"
                    f" | answers citing a note {part['cites a note'] / n:.2f}"
                )
        notebook.delete()


if __name__ == "__main__":
    main()
