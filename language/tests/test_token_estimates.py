import json
import random
import re
from pathlib import Path

from language.tokens import estimate_tokens

QUESTIONS = Path(__file__).resolve().parents[2].parent / "shared/data/manual-qa/questions.jsonl"


def test_a_token_estimate_counts_a_token_per_six_letters_of_each_word():
    assert estimate_tokens("") == 0
    assert estimate_tokens("cat sat.") == 3  # "cat", "sat", "."
    assert estimate_tokens("herons") == 1  # six letters
    assert estimate_tokens("Donaudampfschifffahrt") == 4  # 21 letters


def _token_by_token(text: str) -> int:
    """The rule as the module's docstring states it, one token at a time."""
    return sum(1 + (len(token) - 1) // 6 for token in re.findall(r"\w+|[^\w\s]", text))


def test_the_estimate_follows_the_rule_token_by_token():
    lines = QUESTIONS.read_text(encoding="utf-8").splitlines()
    items = [json.loads(line) for line in lines]  # English and German
    texts = [item[field] for item in items for field in ("question", "answer")]
    rng = random.Random(7)
    letters = "ab_7äß€.-, \n"
    texts += ["".join(rng.choice(letters) for _ in range(rng.randint(0, 40))) for _ in range(500)]
    texts += ["a" * n for n in range(1, 30)] + ["x" * 13 + " " + "y" * 7 + "!", "über-große"]
    for text in texts:
        assert estimate_tokens(text) == _token_by_token(text), text
    assert estimate_tokens(*texts) == sum(map(_token_by_token, texts))
