"""The chat model as a judge of citations, against a person's reading and against the word
check (citations/verification.py).

For each row of bench/support_labels.jsonl (a cited sentence of the 1.5B model, its passage,
and whether the passage states it, read by hand) the model at CHAT_BASE_URL is asked whether
the passage states the sentence, one token, temperature 0; its probability of "yes" against
"no" (from the reply's top log-probabilities, which llama.cpp's server gives) is the judge's
score. Prints, for the model's own markers and for all, how well each score separates stated
from unstated sentences (AUC), what the word check passes, and what it passes with the judge
beside it; and the seconds per judgement.

    CHAT_BASE_URL=http://127.0.0.1:8931/v1 CHAT_MODEL=local/qwen \
        .venv/bin/python bench/support_judge.py
"""

from __future__ import annotations

import json
import math
import os
import statistics
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()  # the check reads no table, but its module imports the models

from citations.verification import SUPPORT_THRESHOLD, best_support  # noqa: E402

LABELS = Path(__file__).resolve().parent / "support_labels.jsonl"
SYSTEM = "You check facts. Answer only yes or no."
ASK = (
    "Passage:\n{passage}\n\nSentence: {sentence}\n\n"
    "Does the passage state what the sentence says? Answer yes or no."
)


def p_yes(row: dict) -> tuple[float, float]:
    """The model's probability of "yes" against "no" for `row`, and the seconds it took."""
    body = {
        "model": os.environ.get("CHAT_MODEL", "local/qwen"),
        "messages": [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": ASK.format(**row)},
        ],
        "max_tokens": 1,
        "temperature": 0,
        "logprobs": True,
        "top_logprobs": 10,
    }
    request = urllib.request.Request(
        os.environ["CHAT_BASE_URL"].rstrip("/") + "/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    started = time.monotonic()
    with urllib.request.urlopen(request, timeout=600) as response:
        reply = json.load(response)
    seconds = time.monotonic() - started
    chances = {"yes": 0.0, "no": 0.0}
    for top in reply["choices"][0]["logprobs"]["content"][0]["top_logprobs"]:
        word = top["token"].strip().lower()
        if word in chances:
            chances[word] += math.exp(top["logprob"])
    return chances["yes"] / ((chances["yes"] + chances["no"]) or 1.0), seconds


def auc(scored: list[tuple[float, bool]]) -> float:
    """The chance that a stated sentence scores above an unstated one (ties count half)."""
    stated = [score for score, label in scored if label]
    unstated = [score for score, label in scored if not label]
    pairs = sum((a > b) + 0.5 * (a == b) for a in stated for b in unstated)
    return pairs / max(1, len(stated) * len(unstated))


def main() -> None:
    rows = [json.loads(line) for line in LABELS.open()]
    seconds = []
    for row in rows:
        row["judge"], took = p_yes(row)
        row["words"] = best_support(row["sentence"], row["passage"]).score
        seconds.append(took)
    for name, kept in (
        ("markers placed by the model", [row for row in rows if row["marker_by"] == "model"]),
        ("all markers", rows),
    ):
        stated = sum(row["stated"] for row in kept)
        print(f"{name}: {stated} stated, {len(kept) - stated} not stated")
        for key in ("words", "judge"):
            print(f"  AUC {key}: {auc([(row[key], row['stated']) for row in kept]):.3f}")
        for floor in (None, 0.8, 0.9):
            passed = [
                row
                for row in kept
                if row["words"] >= SUPPORT_THRESHOLD and (floor is None or row["judge"] >= floor)
            ]
            label = "word check" + ("" if floor is None else f" and judge >= {floor}")
            right = sum(row["stated"] for row in passed)
            print(
                f"  {label}: stated passed {right}/{stated}, "
                f"unstated passed {len(passed) - right}/{len(kept) - stated}"
            )
    print(f"seconds per judgement p50: {statistics.median(seconds):.1f}")


if __name__ == "__main__":
    main()
