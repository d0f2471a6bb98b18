"""Measure the support threshold of citations/verification.py on covid-qa-dev.

A claim is a question and its answer run together (what a model's cited sentence says).
It should be supported by the passage around the answer, and not by a passage of the
same article far from it (the realistic mistake: a topical passage that does not say
this). Prints, for each threshold, the share of true supports that pass and the share of
wrong passages that pass.

    .venv/bin/python bench/measure_support.py [--items 300]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()  # the check reads no table, but its module imports the models

from citations.verification import best_support  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "qa" / "covid-qa-dev"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=300)
    args = parser.parse_args()
    items = [json.loads(line) for line in (DATA / "items.jsonl").open()]
    random.Random(7).shuffle(items)
    true_scores, wrong_scores = [], []
    for item in items[: args.items]:
        text = (DATA / "docs" / f"{item['doc_id']}.txt").read_text()
        start = item["answer_start"]
        far = start + 4000 if start + 6400 < len(text) else start - 6400
        if len(text) < 8000 or far < 0:
            continue
        wrong = text[far : far + 2400]
        if item["answers"][0] in wrong:
            continue
        claim = item["question"].rstrip("?") + " " + item["answers"][0]
        true_scores.append(best_support(claim, text[max(0, start - 1200) : start + 1200]).score)
        wrong_scores.append(best_support(claim, wrong).score)
    print(f"{len(true_scores)} claims")
    for threshold in (0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6):
        passed = sum(score >= threshold for score in true_scores) / len(true_scores)
        wrongly = sum(score >= threshold for score in wrong_scores) / len(wrong_scores)
        print(
            f"threshold {threshold:.2f}: supported {passed:.3f}, wrong passage passes {wrongly:.3f}"
        )


if __name__ == "__main__":
    main()
