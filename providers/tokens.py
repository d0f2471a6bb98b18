"""Token counts for calls whose API reports none (some OpenAI-compatible servers omit
`usage`), and for fitting prompts into a model's context.

An estimate, not the provider's tokenizer: a word of up to six letters counts one token
and each further six letters one more (BPE vocabularies hold common words whole and split
long ones), a punctuation mark one. On 20 pages of the Debian Reference this counts 12,449
for English text (multilingual-e5's SentencePiece: 12,535) and 12,937 for German (14,169);
the earlier rule, a token per four characters of each word, counted 14,518, and a real
llama.cpp server (Qwen2.5) counted 3,857 for a prompt it put at 5,078. It still errs on the
high side for English, which keeps prompts inside the context, and keeps calls without a
reported count from being recorded, and billed, as free.
"""

from __future__ import annotations

import re
from typing import Any

WORD_PIECE_CHARS = 6
# One match per token the rule counts: up to six letters of a word (a longer word matches
# once per six letters begun), or a punctuation mark. One pass of the regex engine instead
# of a Python step per token: a prompt's passages are fitted on the way to every answer's
# first token (bench/README.md, streaming overhead).
TOKEN_PIECE_RE = re.compile(rf"\w{{1,{WORD_PIECE_CHARS}}}|[^\w\s]")


def estimate_tokens(*texts: str) -> int:
    return sum(len(TOKEN_PIECE_RE.findall(text)) for text in texts)


def reported_or_estimated(usage: Any, field: str, *texts: str) -> int:
    """The API's own count when it gave one, else the estimate over `texts`."""
    reported = getattr(usage, field, None) if usage is not None else None
    if isinstance(reported, int):
        return reported
    return estimate_tokens(*texts)
