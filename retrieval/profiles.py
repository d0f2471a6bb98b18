"""What retrieval knows about each embedding model: one profile a model, in one place.

A model's similarities are on its own scale (e5 puts related and unrelated text between ~0.7
and ~0.9, the universal sentence encoder between ~0 and ~0.5, API models spread wider), so
every figure that compares them with something is per model: the floor below which a chunk
counts as unrelated (the search), the dense side's share in the hybrid fusion with and
without windows (the search), whether the model's chunks get windows under
RETRIEVAL_WINDOWS=local (retrieval/windows.py), the similarity at which a question
counts as covered (retrieval/coverage.py), and whether hybrid search compares from the
notebook's centre and keeps places for the chunks closest in meaning. Each was measured
for the local models (how and the figures: docs/retrieval.md); a model not measured gets
DEFAULT.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from library import embedding_state
from providers import local_e5, local_fuse


@dataclass(frozen=True)
class ModelProfile:
    # Below it a chunk counts as unrelated: about the 5th percentile of the answer chunks'
    # similarity on covid-qa-dev for the local models.
    floor: float
    # The dense side's share in the weighted fusion, the best on covid-qa-dev: chunks scored
    # by their own vector, and by their closest part (their similarities rank better, so
    # they weigh more).
    dense_weight: float
    windowed_dense_weight: float
    # Whether RETRIEVAL_WINDOWS=local makes windows for the model's chunks: those measured
    # with them.
    windows: bool
    # The best passage similarity at or above which a question counts as covered, in the gap
    # between manual-qa's answerable and off-topic questions; None: not measured, the
    # question is judged by its words alone (retrieval/coverage.py).
    covered_similarity: float | None
    # Hybrid search compares a notebook's chunks with the question from their mean rather
    # than from the origin, and gives the `dense_places` chunks closest in meaning a place
    # among the k whatever their words (retrieval/sql/hybrid.sql, `centre` and `chosen`):
    # measured with e5, on manual-qa's paraphrased questions and covid-qa-dev together.
    centred: bool = False
    dense_places: int = 0


DEFAULT = ModelProfile(
    floor=0.3,
    dense_weight=0.3,
    windowed_dense_weight=0.3,
    windows=False,
    covered_similarity=None,
)
PROFILES = {
    local_e5.MODEL_NAME: ModelProfile(
        floor=0.80,
        dense_weight=0.4,
        windowed_dense_weight=0.5,
        windows=True,
        covered_similarity=0.85,
        centred=True,
        dense_places=2,
    ),
    # Ranks passages less well than e5: its similarity weighs less. Not measured with
    # windows nor for coverage.
    local_fuse.MODEL_NAME: ModelProfile(
        floor=0.05,
        dense_weight=0.2,
        windowed_dense_weight=DEFAULT.windowed_dense_weight,
        windows=False,
        covered_similarity=None,
    ),
}


def profile(model: str) -> ModelProfile:
    return PROFILES.get(model, DEFAULT)


def windowed_models() -> list[str]:
    """The models RETRIEVAL_WINDOWS=local makes windows for."""
    return sorted(model for model, profile in PROFILES.items() if profile.windows)


def similarity_floor(model: str | None = None) -> float:
    """The floor of `model` (None: the active one), unless SIMILARITY_FLOOR sets one for
    every model."""
    if settings.SIMILARITY_FLOOR >= 0:
        return float(settings.SIMILARITY_FLOOR)
    return profile(model or embedding_state.active_model()).floor
