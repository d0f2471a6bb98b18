"""Ingest overhead: time from add_source to `ready` for a 117-page text
PDF with an instant embedder (the test OpenAI server), divided by pypdf's raw extraction
of the same file. Target <= 1.3x. Capture mode "text": `auto` may send illegible pages
to the vision model, which is not what this measures.

    LOUPE_DATA_DIR=/tmp/loupe-bench .venv/bin/python bench/ingest_overhead.py [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _setup import SHARED, django_setup  # noqa: E402

PDF = SHARED / "pdfs" / "sample-files" / "GeoTopo-komprimiert.pdf"


def raw_extraction_seconds() -> tuple[float, int]:
    from pypdf import PdfReader

    started = time.perf_counter()
    reader = PdfReader(PDF)
    for page in reader.pages:
        page.extract_text()
    return time.perf_counter() - started, len(reader.pages)


def ingest_seconds() -> tuple[float, str, int]:
    from django.contrib.auth import get_user_model
    from django.core.files.base import ContentFile

    from ingest.services import add_source, process_source
    from notebooks.models import Notebook

    # A new owner each run: the same bytes from the same owner would link, not ingest.
    owner = get_user_model().objects.create_user(username=f"bench-{uuid.uuid4().hex[:12]}")
    notebook = Notebook.objects.create(owner=owner, title="bench")
    content = PDF.read_bytes()
    started = time.perf_counter()
    added = add_source(
        owner=owner,
        notebook=notebook,
        upload=ContentFile(content, name=PDF.name),
        pdf_capture="text",
    )
    source = process_source(source_id=added.source.pk)
    elapsed = time.perf_counter() - started
    return (
        elapsed,
        source.status + (f": {source.error}" if source.error else ""),
        (source.chunk_count or 0),
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    from providers.tests.fake_openai import FakeOpenAI

    with FakeOpenAI.running() as server:
        # Settings read the environment once, at django.setup().
        os.environ.update(
            OPENAI_BASE_URL=server.base_url,
            OPENAI_API_KEY="test",
            CHAT_MODEL="fake-chat",
            EMBEDDING_MODEL="fake-embed",
            EMBEDDING_DIMENSIONS="384",
            SOURCE_SUMMARIES="extractive",
            MODEL_PRICES=json.dumps(
                {
                    "fake-chat": {"input_per_million": "2", "output_per_million": "8"},
                    "fake-embed": {"input_per_million": "0.1"},
                }
            ),
        )
        django_setup()
        from procrastinate.contrib.django import app
        from procrastinate.testing import InMemoryConnector

        with app.replace_connector(InMemoryConnector()):
            raw = min(raw_extraction_seconds()[0] for _ in range(args.runs))
            _, pages = raw_extraction_seconds()
            runs = [ingest_seconds() for _ in range(args.runs)]
    statuses = {status for _, status, _ in runs}
    if statuses != {"ready"}:
        sys.exit(f"ingest did not end ready: {statuses}")
    best = min(seconds for seconds, _, _ in runs)
    chunks = runs[0][2]
    ratio = best / raw
    print(f"PDF: {PDF.name}, {pages} pages, {chunks} chunks, capture=text")
    print(f"pypdf raw extraction: {raw:.2f} s (best of {args.runs})")
    print(
        f"add_source -> ready:  {best:.2f} s (best of {args.runs}; all: "
        + ", ".join(f"{s:.2f}" for s, _, _ in runs)
        + ")"
    )
    print(f"overhead: {ratio:.2f}x (target <= 1.3x)")
    print(f"{pages / best:.1f} pages/s, {chunks / best:.1f} chunks/s")
    print(
        json.dumps(
            {
                "bench": "ingest_overhead",
                "pages": pages,
                "chunks": chunks,
                "raw_s": round(raw, 3),
                "ingest_s": round(best, 3),
                "ratio": round(ratio, 3),
                "target": 1.3,
                "pages_per_s": round(pages / best, 1),
                "chunks_per_s": round(chunks / best, 1),
            }
        )
    )


if __name__ == "__main__":
    main()
