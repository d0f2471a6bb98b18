"""Retrieval latency at every notebook size: question -> ranked passages, p50/p95, through
the path retrieval.search itself chooses for the notebook's size (`by_size` in the JSON
line), beside the exact scan and HNSW (iterative scan, notebook filter) each forced, with
recall@8 against the exact ranking, for notebooks of 1k / 5k / 10k / 30k / 100k (/ 1M)
chunks of 384 (and 1024) dimensions.

Each set is one embedding model of its own (`bench/sampled-D-N`: a notebook of N chunks of D
dimensions, passages sampled from the covid-qa documents' sentences (`passages`), synthetic
embedding-like vectors from a seeded generator), so one index of its own. Its chunks sit in
sources of 1,000 chunks; the measured notebook holds N of them, another owner's notebook a
tenth more (at least one source), so the notebook filter always filters. Smaller notebooks
inside the same table (2k ... 20k chunks) show where the exact scan stops being the faster
one: the rule in retrieval/search.py. A set is built once (binary COPY) and kept in the data
folder; later runs reuse it, and the index build time is printed when it is made.

Each query runs through retrieval.search with RETRIEVAL_EXACT_MAX_CHUNKS forcing one path,
then all of them again through the other, then through the path the settings choose (not
alternating: see measure()). "With the embedding" adds the local e5 model embedding the
question (384 dimensions only: a 1024-dimension model would be a remote API, whose latency
is not ours).

    LOUPE_DATA_DIR=/tmp/loupe-retrieval-bench .venv/bin/python bench/retrieval_latency.py \
        [--sizes 1000,5000,10000,30000,100000] [--million] [--dims 384] [--queries 100]
        [--build-only] [--no-embed] [--ef-search 400[,100,200]]

`--million` adds the 1M-chunk notebook (its set takes ~15 min to build and 2 GB; its
searches 30 queries, as the exact scans of it take seconds each).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import struct
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _setup import SHARED, django_setup  # noqa: E402

if TYPE_CHECKING:
    from notebooks.models import Notebook

QA = SHARED / "qa" / "covid-qa-dev"
SOURCE_CHUNKS = 1_000
# Notebooks of these sizes (chunks) are made inside every set at least 10 times as big.
PROBE_SIZES = (2_000, 5_000, 10_000, 20_000)
K = 8
SEED = 6
# About the covid-qa chunks' length (window 120 tokens: 94 words on average).
PASSAGE_WORDS = 90


# Vectors shaped like text embeddings rather than uniform noise: uniform random unit
# vectors in 384 dimensions are all nearly equally far apart, a worst case no embedding
# model produces, on which any approximate index looks bad (HNSW recall@8 0.59 at 10k here).
# These come from LATENT-dimensional points around TOPICS topic centres, projected to D
# dimensions, plus isotropic noise carrying ~10 % of the energy; questions are drawn the
# same way. Latency does not depend on the shape; recall does.
LATENT = 64
TOPICS = 500


def model_name(size: int, dims: int) -> str:
    return f"bench/sampled-{dims}-{size}"


def embedding_like(rng: np.random.Generator, count: int, dims: int) -> np.ndarray:
    space = np.random.default_rng(SEED + dims)  # the same space for chunks and questions
    projection = space.standard_normal((LATENT, dims), dtype=np.float32) / np.sqrt(LATENT)
    topics = space.standard_normal((TOPICS, LATENT), dtype=np.float32)
    latent = topics[rng.integers(0, TOPICS, count)]
    latent += 0.5 * rng.standard_normal((count, LATENT), dtype=np.float32)
    vectors = latent @ projection + 0.35 * rng.standard_normal((count, dims), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors


def covid_sentences() -> list[list[str]]:
    """The covid-qa documents' sentences, document by document."""
    documents = []
    for path in sorted((QA / "docs").glob("*.txt")):
        text = " ".join(path.read_text().split())
        documents.append([s for s in re.split(r"(?<=[.!?])\s+", text) if s])
    return documents


def passages(rng: np.random.Generator, documents: list[list[str]], count: int) -> list[str]:
    """`count` passages of about PASSAGE_WORDS words, each sentences of one covid-qa document:
    from a random sentence on, each next one kept or skipped, now and then a jump elsewhere in
    the document. Every passage reads like a chunk of that document, and hardly two are the
    same: cut from the 49 documents alone, a 1M-chunk set held each of their ~3,200 chunks
    ~300 times, so a question's best passage by its words came in hundreds of copies, the
    exact ranking chose among them by id, and a path that read other copies than the exact
    one "missed" all of them."""
    sizes = np.array([len(d) for d in documents], dtype=float)
    picked = rng.choice(len(documents), size=count, p=sizes / sizes.sum())
    out = []
    for d in picked:
        sentences = documents[d]
        at, words, chosen = int(rng.integers(len(sentences))), 0, []
        while words < PASSAGE_WORDS:
            if rng.random() < 0.7:
                chosen.append(sentences[at])
                words += len(sentences[at].split())
            at = int(rng.integers(len(sentences))) if rng.random() < 0.15 else at + 1
            at %= len(sentences)
        out.append(" ".join(chosen))
    return out


def build_set(size: int, dims: int) -> None:
    """Sources, notebooks and `size` chunks of `dims` dimensions, unless already there."""
    from django.contrib.auth import get_user_model
    from django.db import DEFAULT_DB_ALIAS, connection, connections, transaction

    from library.models import Chunk, Source
    from notebooks.models import Notebook, NotebookSource

    model = model_name(size, dims)
    mine = max(1, size // SOURCE_CHUNKS)
    count = mine + max(1, mine // 10)
    if Chunk.objects.filter(embedding_model=model).count() == count * SOURCE_CHUNKS:
        return
    started = time.perf_counter()
    users = get_user_model().objects
    owner, _ = users.get_or_create(username=f"bench-{dims}-{size}")
    other, _ = users.get_or_create(username=f"bench-{dims}-{size}-other")
    documents = covid_sentences()
    rng = np.random.default_rng(SEED + dims * 1_000_003 + size)
    text_rng = np.random.default_rng(SEED + size)
    # The full-text vectors are made by PostgreSQL, in its binary form, on a connection of
    # their own: the one below is busy with the COPY.
    vectors_of_text = connections.create_connection(DEFAULT_DB_ALIAS)
    with transaction.atomic():
        Source.objects.filter(owner__in=[owner, other]).delete()
        Notebook.objects.filter(owner__in=[owner, other]).delete()
        sources = Source.objects.bulk_create(
            Source(
                owner=owner if n < mine else other,
                kind=Source.Kind.TEXT,
                title=f"bench {n}",
                filename=f"bench-{n}.txt",
                sha256=f"bench-{dims}-{size}-{n}",
                status=Source.Status.READY,
                chunk_count=SOURCE_CHUNKS,
                language="en",
                search_config="english",
            )
            for n in range(count)
        )
        notebooks = {"all": sources[:mine]}
        for probe in PROBE_SIZES:
            if probe * 10 <= size:
                notebooks[str(probe)] = sources[: probe // SOURCE_CHUNKS]
        links = []
        for title, members in notebooks.items():
            notebook = Notebook.objects.create(owner=owner, title=title)
            links += [
                NotebookSource(notebook=notebook, source=s, added_by_id=s.owner_id) for s in members
            ]
        theirs = Notebook.objects.create(owner=other, title="theirs")
        links += [
            NotebookSource(notebook=theirs, source=s, added_by_id=s.owner_id)
            for s in sources[mine:]
        ]
        NotebookSource.objects.bulk_create(links)

        model_bytes = model.encode()
        row_head = struct.pack(">h", 11)
        # No page label; no section: jsonb's binary form is its version (1), then its text.
        blank = struct.pack(">i", 0) + struct.pack(">i", 3) + b"\x01[]"
        vector_head = struct.pack(">hh", dims, 0)
        with (
            connection.cursor() as cursor,
            cursor.cursor.copy(
                "COPY library_chunk (source_id, ordinal, page, text, char_start, char_end, "
                "embedding, embedding_model, search_vector, page_label, section) "
                "FROM STDIN (FORMAT BINARY)"
            ) as copy,
        ):
            copy.write(b"PGCOPY\n\xff\r\n\x00" + struct.pack(">ii", 0, 0))
            ordinal_in_source = 0
            total = count * SOURCE_CHUNKS
            for start in range(0, total, 10_000):
                batch = embedding_like(rng, min(10_000, total - start), dims).astype(">f4")
                texts = passages(text_rng, documents, len(batch))
                with vectors_of_text.cursor() as text_cursor:
                    text_cursor.execute(
                        "SELECT tsvectorsend(to_tsvector('english', t)) FROM unnest(%s::text[]) "
                        "WITH ORDINALITY AS u(t, n) ORDER BY n",
                        [texts],
                    )
                    tsvectors = [bytes(row[0]) for row in text_cursor.fetchall()]
                out = bytearray()
                for offset, vector in enumerate(batch):
                    n = start + offset
                    source = sources[n // SOURCE_CHUNKS]
                    ordinal_in_source = n % SOURCE_CHUNKS
                    text, tsvector = texts[offset].encode(), tsvectors[offset]
                    raw = vector_head + vector.tobytes()
                    out += row_head
                    out += struct.pack(">iq", 8, source.pk)
                    out += struct.pack(">ii", 4, ordinal_in_source)
                    out += struct.pack(">i", -1)  # page: none
                    out += struct.pack(">i", len(text)) + text
                    out += struct.pack(">ii", 4, 0)
                    out += struct.pack(">ii", 4, len(text))
                    out += struct.pack(">i", len(raw)) + raw
                    out += struct.pack(">i", len(model_bytes)) + model_bytes
                    out += struct.pack(">i", len(tsvector)) + tsvector
                    out += blank
                copy.write(bytes(out))
            copy.write(struct.pack(">h", -1))
    vectors_of_text.close()
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE library_chunk")
    elapsed = time.perf_counter() - started
    print(f"{model}: inserted {count * SOURCE_CHUNKS} chunks in {elapsed:.0f} s", flush=True)


def build_index(size: int, dims: int) -> None:
    from django.db import connection

    from library.vector_indexes import (
        ensure_text_index,
        ensure_vector_index,
        index_is_valid,
        index_name,
        text_index_name,
    )

    model = model_name(size, dims)
    if not index_is_valid(text_index_name(model=model)):
        started = time.perf_counter()
        ensure_text_index(model=model)
        print(
            f"{model}: full-text index built in {time.perf_counter() - started:.0f} s", flush=True
        )
    if index_is_valid(index_name(model=model, dimensions=dims)):
        return
    started = time.perf_counter()
    with connection.cursor() as cursor:
        # The graph in memory while it is built (it spills to disk, much slower, beyond).
        cursor.execute(f"SET maintenance_work_mem = '{4 if size >= 1_000_000 else 2}GB'")
    ensure_vector_index(model=model, dimensions=dims)
    with connection.cursor() as cursor:
        cursor.execute("RESET maintenance_work_mem")
        cursor.execute("SELECT pg_relation_size(%s)", [index_name(model=model, dimensions=dims)])
        megabytes = cursor.fetchone()[0] / 2**20
    print(
        f"{model}: HNSW index built in {time.perf_counter() - started:.0f} s ({megabytes:.0f} MB)",
        flush=True,
    )


def percentiles(seconds: list[float]) -> tuple[float, float]:
    ordered = sorted(seconds)
    return (
        statistics.median(ordered) * 1000,
        ordered[min(len(ordered) - 1, round(0.95 * len(ordered)) - 1)] * 1000,
    )


def timed(function: Any, **kwargs: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    result = function(**kwargs)
    return time.perf_counter() - started, result


def overlap(truth: list[int], found: list[int]) -> float:
    """recall@k of `found` against the exact ranking `truth`."""
    return len(set(truth) & set(found)) / max(1, len(truth))


def chosen_path(size: int, dims: int) -> str:
    """The path the size rules of retrieval/search.py take for the set's notebook: "exact",
    or "hnsw" (the vectors and the full text through the model's indexes)."""
    from django.conf import settings
    from django.db import connection

    from library.vector_indexes import index_name
    from retrieval import search

    if size > settings.RETRIEVAL_EXACT_MAX_CHUNKS:
        return "hnsw"
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT reltuples FROM pg_class WHERE oid = to_regclass(%s)",
            [index_name(model=model_name(size, dims), dimensions=dims)],
        )
        row = cursor.fetchone()
    rows = row[0] if row and row[0] > 0 else float("inf")
    indexed = size >= search.INDEX_MIN_CHUNKS and size >= search.INDEX_MIN_SHARE * rows
    return "hnsw" if indexed else "exact"


def measure(
    size: int, dims: int, queries: int, *, embed: bool, ef_searches: list[int]
) -> dict[str, Any]:
    from django.conf import settings

    from notebooks.models import Notebook
    from providers import embeddings, local_e5
    from retrieval import search
    from retrieval.search import search_notebook, search_notebook_hybrid

    model = model_name(size, dims)
    owner = f"bench-{dims}-{size}"
    notebooks = {n.title: n for n in Notebook.objects.filter(owner__username=owner)}
    rng = np.random.default_rng(3)
    questions = [json.loads(line)["question"] for line in (QA / "items.jsonl").open()]
    vectors = [v.tolist() for v in embedding_like(rng, queries, dims)]
    asked = [questions[int(i)] for i in rng.integers(0, len(questions), queries)]
    # The settings' own rule last: the path the product takes for this notebook's size.
    paths = {"exact": 10**12, "hnsw": -1, "chosen": settings.RETRIEVAL_EXACT_MAX_CHUNKS}
    # The exact path forced: no notebook's share of the index sends its dense side to HNSW.
    index_min_chunks = search.INDEX_MIN_CHUNKS
    settings.RETRIEVAL_HNSW_EF_SEARCH, sweep = ef_searches[0], ef_searches[1:]

    def run(path: str, notebook: Notebook, vector: list[float], question: str) -> tuple:
        settings.RETRIEVAL_EXACT_MAX_CHUNKS = paths[path]
        search.INDEX_MIN_CHUNKS = paths["exact"] if path == "exact" else index_min_chunks
        dense_s, hits = timed(
            search_notebook, notebook=notebook, query_vector=vector, model=model, k=K
        )
        hybrid_s, hybrid_hits = timed(
            search_notebook_hybrid,
            notebook=notebook,
            question=question,
            query_vector=vector,
            model=model,
            k=K,
        )
        return (
            dense_s,
            hybrid_s,
            [hit.chunk.pk for hit in hits],
            [hit.chunk.pk for hit in hybrid_hits],
        )

    result: dict[str, Any] = {"chunks": size, "dims": dims}
    big = notebooks["all"]
    asked_pairs = list(zip(vectors, asked, strict=True))
    timings: dict[str, list[float]] = {}
    recalls: dict[str, list[float]] = {}
    truths: list[list[int]] = []
    hybrid_truths: list[list[int]] = []
    short = 0
    # Each path in a pass of its own, the exact scans (the reference rankings) first.
    # Interleaved, each HNSW search ran after an exact scan of the whole 90k-chunk notebook,
    # which no search of a notebook this large does (the size rule sends it to HNSW):
    # measured that way, the HNSW path's p95 was the caches refilling after the scan more
    # than the search. The HNSW pass is timed after an untimed one over the same questions:
    # a server in use holds a library's index and the chunks its searches read in its
    # buffers, while one just started reads them from disk. The
    # exact scans read the whole notebook either way; a few warm them. The chosen pass runs
    # the settings' rule, as every search of the product does: `by_size` reports it.
    for path in paths:
        for vector, question in asked_pairs if path != "exact" else asked_pairs[:5]:
            run(path, big, vector, question)
        for index, (vector, question) in enumerate(asked_pairs):
            dense_s, hybrid_s, found, hybrid_found = run(path, big, vector, question)
            timings.setdefault(f"{path}_dense", []).append(dense_s)
            timings.setdefault(f"{path}_hybrid", []).append(hybrid_s)
            if path == "exact":
                truths.append(found)
                hybrid_truths.append(hybrid_found)
                continue
            recalls.setdefault(path, []).append(overlap(truths[index], found))
            recalls.setdefault(f"{path}_hybrid", []).append(
                overlap(hybrid_truths[index], hybrid_found)
            )
            short += path == "hnsw" and len(found) < K
    if embed and dims == 384:
        local = embeddings.EmbeddingModel(local_e5.MODEL_NAME)
        for question in asked:
            embed_s, _ = timed(embeddings.embed_query, text=question, user=None, model=local)
            timings.setdefault("embed", []).append(embed_s)
        for name in ("exact_dense", "exact_hybrid", "hnsw_dense", "hnsw_hybrid"):
            timings[name + "+embed"] = [
                a + b for a, b in zip(timings[name], timings["embed"], strict=True)
            ]
    for name, seconds in timings.items():
        p50, p95 = percentiles(seconds)
        result[name] = [round(p50, 1), round(p95, 1)]
    result["recall@8"] = round(statistics.mean(recalls["hnsw"]), 3)
    result["hybrid_recall@8"] = round(statistics.mean(recalls["hnsw_hybrid"]), 3)
    result["hnsw_short_results"] = short
    result["chosen"] = {
        "path": chosen_path(size, dims),
        "hybrid": result["chosen_hybrid"],
        "dense": result["chosen_dense"],
        "recall@8": round(statistics.mean(recalls["chosen"]), 3),
        "hybrid_recall@8": round(statistics.mean(recalls["chosen_hybrid"]), 3),
    }
    # Other ef_search values, dense through HNSW only, against the same exact rankings; each
    # as named, whatever the size of the index (the rule by its size off).
    small_index_rows, search.SMALL_INDEX_ROWS = search.SMALL_INDEX_ROWS, -1
    for ef_search in sweep:
        settings.RETRIEVAL_HNSW_EF_SEARCH = ef_search
        swept_s: list[float] = []
        swept: list[float] = []
        for vector, truth in zip(vectors, truths, strict=True):
            settings.RETRIEVAL_EXACT_MAX_CHUNKS = paths["hnsw"]
            elapsed, hits = timed(
                search_notebook, notebook=big, query_vector=vector, model=model, k=K
            )
            swept_s.append(elapsed)
            swept.append(len(set(truth) & {hit.chunk.pk for hit in hits}) / K)
        result[f"ef_search_{ef_search}"] = {
            "hnsw_dense": [round(v, 1) for v in percentiles(swept_s)],
            "recall@8": round(statistics.mean(swept), 3),
        }
    settings.RETRIEVAL_HNSW_EF_SEARCH = ef_searches[0]
    search.SMALL_INDEX_ROWS = small_index_rows
    # Smaller notebooks in the same table: where does HNSW start to pay?
    for title in map(str, PROBE_SIZES):
        if title not in notebooks:
            continue
        probe: dict[str, list[float]] = {"exact": [], "hnsw": []}
        probe_recalls = []
        for vector, question in zip(vectors[:40], asked[:40], strict=True):
            exact_s, _, truth, _ = run("exact", notebooks[title], vector, question)
            hnsw_s, _, found, _ = run("hnsw", notebooks[title], vector, question)
            probe["exact"].append(exact_s)
            probe["hnsw"].append(hnsw_s)
            probe_recalls.append(overlap(truth, found))
        result[f"notebook_{title}"] = {
            "exact_dense": [round(v, 1) for v in percentiles(probe["exact"])],
            "hnsw_dense": [round(v, 1) for v in percentiles(probe["hnsw"])],
            "hnsw_recall@8": round(statistics.mean(probe_recalls), 3),
        }
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,5000,10000,30000,100000")
    # `make bench` runs the defaults (a few minutes; the first run builds the sets); the
    # 1024-dimension and 1M-chunk sets are asked for (bench/README.md has their figures).
    parser.add_argument("--million", action="store_true", help="add the 1M-chunk notebook")
    parser.add_argument("--dims", default="384")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--build-only", action="store_true")
    parser.add_argument("--no-embed", action="store_true", help="skip the e5 question timing")
    parser.add_argument(
        "--ef-search",
        default="",
        help="hnsw.ef_search for the run (default: the setting); more values, comma-separated, "
        "add an HNSW-only sweep against the same exact rankings",
    )
    args = parser.parse_args()
    django_setup()
    from django.conf import settings

    sizes = [int(s) for s in args.sizes.split(",")] + ([1_000_000] if args.million else [])
    sets = [(size, int(d)) for size in sizes for d in args.dims.split(",")]
    for size, dims in sets:
        build_set(size, dims)
        build_index(size, dims)
    if args.build_only:
        return
    ef_searches = [int(v) for v in args.ef_search.split(",") if v] or [
        settings.RETRIEVAL_HNSW_EF_SEARCH
    ]
    from retrieval import search

    print(
        f"k={K}, {args.queries} queries, hnsw.ef_search={ef_searches[0]} (at most "
        f"{search.SMALL_INDEX_EF_SEARCH} for an index of <= {search.SMALL_INDEX_ROWS} rows), "
        "p50 / p95 in ms"
    )
    by_size: dict[str, dict[str, Any]] = {}
    for size, dims in sets:
        queries = min(args.queries, 30) if size >= 1_000_000 else args.queries
        result = measure(size, dims, queries, embed=not args.no_embed, ef_searches=ef_searches)
        print(json.dumps({"bench": "retrieval_latency", **result}), flush=True)
        if dims == 384:
            chosen = result["chosen"]
            by_size[str(size)] = {
                "hybrid": chosen["hybrid"],
                "dense": chosen["dense"],
                "recall@8": chosen["recall@8"],
                "hybrid_recall@8": chosen["hybrid_recall@8"],
                "path": chosen["path"],
            }
    # One line with every size's figures, of the path the product chooses for it.
    print(json.dumps({"bench": "retrieval_latency", "by_size": by_size}), flush=True)


if __name__ == "__main__":
    main()
