"""Ingest overhead: time from add_source to `ready` for a real 261-page manual with an
instant embedder (the test OpenAI server), divided by PDFium's raw text extraction of the
same file (what the loader itself calls). Target <= 1.5x. `--server-latency 0.15` makes
every embedding request wait as a remote API's does. Capture mode "text": `auto` may
send illegible pages to the vision model, which is not what this measures.

The two sides alternate, run by run. Besides the wall-clock ratio (best of each), the CPU
ratio: the CPU time of this process (Loupe), its children (PDFium's) and its PostgreSQL
backend, over the raw extraction's; on a machine shared with other work it moves far less
than the wall clock. The test server runs in a process of its own, as a real embedding
server would: its CPU is not Loupe's, and is printed apart.

    LOUPE_DATA_DIR=/tmp/loupe-bench .venv/bin/python bench/ingest_overhead.py [--runs 3]
        [--server-latency 0.15]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _setup import SHARED, django_setup  # noqa: E402

PDF = SHARED / "manual-qa" / "debian-reference.en.pdf"
TARGET = 1.5


# The test OpenAI server in a process of its own; it prints its address, then serves until
# its input closes. With a latency, every embedding request waits that long first, as a
# remote API's would.
SERVER = """
import sys
from providers.tests.fake_openai import FakeOpenAI
latency = float(sys.argv[1])
with FakeOpenAI.running() as server:
    if latency:
        server.slow_seconds = latency
        server.fail_next("slow", times=10**9, endpoint="embeddings")
    print(server.base_url, flush=True)
    sys.stdin.read()
"""


def cpu_seconds() -> float:
    """CPU used so far by this process, its finished children and its database backend
    (when the server runs here, as the embedded one does)."""
    from django.db import connection

    used = os.times()
    total = used.user + used.system + used.children_user + used.children_system
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (backend,) = cursor.fetchone()
    return total + process_cpu_seconds(backend)


def process_cpu_seconds(pid: int) -> float:
    """CPU used so far by another running process (0 if it cannot be read)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def raw_extraction_seconds() -> tuple[float, int]:
    import pypdfium2 as pdfium

    started = time.perf_counter()
    document = pdfium.PdfDocument(PDF)
    for index in range(len(document)):
        page = document[index]
        textpage = page.get_textpage()
        textpage.get_text_range()
        textpage.close()
        page.close()
    pages = len(document)
    document.close()
    return time.perf_counter() - started, pages


def searchable_seconds() -> float:
    """Upload to searchable by its words: the job's first slice with no time for vectors
    (ingest/services/pipeline.py reads and writes the chunks, then hands the embedding on)."""
    from django.contrib.auth import get_user_model
    from django.core.files.base import ContentFile

    from ingest.services import add_source, process_source
    from notebooks.models import Notebook

    owner = get_user_model().objects.create_user(username=f"bench-{uuid.uuid4().hex[:12]}")
    notebook = Notebook.objects.create(owner=owner, title="bench")
    started = time.perf_counter()
    added = add_source(
        owner=owner,
        notebook=notebook,
        upload=ContentFile(PDF.read_bytes(), name=PDF.name),
        pdf_capture="text",
    )
    source = process_source(source_id=added.source.pk, slice_seconds=0)
    if source.status != "ready":
        sys.exit(f"the source did not become searchable: {source.status} {source.error}")
    return time.perf_counter() - started


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
    parser.add_argument(
        "--server-latency",
        type=float,
        default=0.0,
        help="seconds each embedding request waits in the test server (a remote API's 0.15)",
    )
    args = parser.parse_args()

    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(args.server_latency)],
        cwd=Path(__file__).resolve().parent.parent,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdin is not None and server.stdout is not None
    base_url = server.stdout.readline().strip()
    try:
        # Settings read the environment once, at django.setup().
        os.environ.update(
            OPENAI_BASE_URL=base_url,
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
            _, pages = raw_extraction_seconds()  # warm: imports, the file in the page cache
            ingest_seconds()  # and the first queries
            raws, runs, raw_cpu, ingest_cpu, server_cpu = [], [], [], [], []
            for _ in range(args.runs):
                before = cpu_seconds()
                raws.append(raw_extraction_seconds()[0])
                middle = cpu_seconds()
                server_before = process_cpu_seconds(server.pid)
                runs.append(ingest_seconds())
                server_cpu.append(process_cpu_seconds(server.pid) - server_before)
                raw_cpu.append(middle - before)
                ingest_cpu.append(cpu_seconds() - middle)
            raw = min(raws)
            searchable = min(searchable_seconds() for _ in range(args.runs))
    finally:
        server.stdin.close()
        server.wait(timeout=10)
    statuses = {status for _, status, _ in runs}
    if statuses != {"ready"}:
        sys.exit(f"ingest did not end ready: {statuses}")
    best = min(seconds for seconds, _, _ in runs)
    chunks = runs[0][2]
    ratio = best / raw
    cpu_ratio = statistics.median(ingest_cpu) / statistics.median(raw_cpu)
    print(f"PDF: {PDF.name}, {pages} pages, {chunks} chunks, capture=text")
    print(f"PDFium raw extraction: {raw:.2f} s (best of {args.runs})")
    print(
        f"add_source -> ready:  {best:.2f} s (best of {args.runs}; all: "
        + ", ".join(f"{s:.2f}" for s, _, _ in runs)
        + ")"
    )
    print(f"overhead: {ratio:.2f}x (target <= {TARGET}x)")
    print(
        f"CPU: {statistics.median(ingest_cpu):.2f} s ÷ {statistics.median(raw_cpu):.2f} s "
        f"(medians) = {cpu_ratio:.2f}x; the embedding server's own, apart: "
        f"{statistics.median(server_cpu):.2f} s"
    )
    print(f"upload -> searchable by its words: {searchable:.2f} s (best of {args.runs})")
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
                "cpu_ratio": round(cpu_ratio, 3),
                "server_cpu_s": round(statistics.median(server_cpu), 3),
                "server_latency_s": args.server_latency,
                "target": TARGET,
                "searchable_s": round(searchable, 3),
                "pages_per_s": round(pages / best, 1),
                "chunks_per_s": round(chunks / best, 1),
            }
        )
    )


if __name__ == "__main__":
    main()
