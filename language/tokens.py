"""Token counts estimated from the text, for fitting prompts into a model's context and for
calls whose API reports no count (providers/tokens.py).

An estimate, not a model's tokenizer: a word of up to six letters counts one token and each
further six letters one more (BPE vocabularies hold common words whole and split long ones),
a punctuation mark one. It errs on the high side for English, which keeps prompts inside
the context, and keeps calls without a reported count from being billed as free (how close
it comes to real tokenizers: docs/decisions.md, "Token estimates").
"""

from __future__ import annotations

import re

WORD_PIECE_CHARS = 6
# One match per token the rule counts: up to six letters of a word (a longer word matches
# once per six letters begun), or a punctuation mark. One pass of the regex engine, not a
# Python step per token: a prompt's passages are fitted on the way to every answer's first
# token.
TOKEN_PIECE_RE = re.compile(rf"\w{{1,{WORD_PIECE_CHARS}}}|[^\w\s]")


def estimate_tokens(*texts: str) -> int:
    return sum(len(TOKEN_PIECE_RE.findall(text)) for text in texts)
