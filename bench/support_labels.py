"""How the citation support check (citations/verification.py) judges sentences a real
small model wrote, against a person's reading.

bench/support_labels.jsonl holds cited sentences of Qwen2.5-Coder-1.5B-Instruct's answers
to manual-qa's questions (2026-12-06, `serve`'s settings). Each row has the passage the
sentence cites, whether that passage states what the sentence says (read by hand:
"stated"), and who put the marker there: the model, or Loupe's attribution of a sentence
the model left uncited. The passages are excerpts of the Debian Reference (Osamu Aoki and
contributors, GPL-2+; see ../shared/data/manual-qa/COPYRIGHT.debian-reference.txt).
Prints, for each threshold, the share of stated sentences the check passes and the share
of unstated ones it passes too.

    .venv/bin/python bench/support_labels.py
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()  # the check reads no table, but its module imports the models

from citations.verification import SUPPORT_THRESHOLD, best_support  # noqa: E402

LABELS = Path(__file__).resolve().parent / "support_labels.jsonl"


def main() -> None:
    rows = [json.loads(line) for line in LABELS.open()]
    for marker_by in ("model", "loupe"):
        # Loupe places a marker only where the check passed: those rows show what its
        # passing is worth, not how much it misses.
        kept = [row for row in rows if row["marker_by"] == marker_by]
        scored = [
            (best_support(row["sentence"], row["passage"]).score, row["stated"]) for row in kept
        ]
        stated = [score for score, label in scored if label]
        unstated = [score for score, label in scored if not label]
        print(f"markers placed by {marker_by}: {len(stated)} stated, {len(unstated)} not stated")
        for threshold in (0.4, 0.5, 0.6):
            passed = sum(score >= threshold for score in stated)
            wrongly = sum(score >= threshold for score in unstated)
            mark = "  (SUPPORT_THRESHOLD)" if threshold == SUPPORT_THRESHOLD else ""
            print(
                f"  threshold {threshold:.1f}: stated passed {passed}/{len(stated)}, "
                f"unstated passed {wrongly}/{len(unstated)}{mark}"
            )


if __name__ == "__main__":
    main()
