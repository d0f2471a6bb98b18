"""The question's closeness to each part of each hit (retrieval/closeness.py)."""

from __future__ import annotations

import pytest

from library.models import ChunkWindow
from retrieval.closeness import part_closeness
from retrieval.search import Hit
from retrieval.tests.chunks import MODEL, QUERY, add_chunk, make_source


def test_each_hit_gets_its_parts_similarities_in_order_or_its_own(notebook):
    source = make_source(notebook)
    long = add_chunk(source, "Long report in three parts.", [0.6, 0.8, 0.0])
    for ordinal, vector in [(2, [0.0, 1.0, 0.0]), (0, [1.0, 0.0, 0.0]), (1, [0.6, 0.8, 0.0])]:
        ChunkWindow.objects.create(chunk=long, model=MODEL, ordinal=ordinal, embedding=vector)
    ChunkWindow.objects.create(chunk=long, model="other-model", ordinal=3, embedding=[1, 0, 0])
    short = add_chunk(source, "Short note.", [0.8, 0.6, 0.0])
    hits = [Hit(chunk=short, similarity=0.8), Hit(chunk=long, similarity=0.6)]

    closeness = part_closeness(hits=hits, query_vector=QUERY, model=MODEL)

    assert closeness[0] == (0.8,)  # no parts: the hit's own similarity
    assert closeness[1] == pytest.approx((1.0, 0.6, 0.0))  # by ordinal, this model's only
    assert part_closeness(hits=[], query_vector=QUERY, model=MODEL) == []
