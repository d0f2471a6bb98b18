"""Streaming overhead: what Loupe adds to the model's time to first token.

The app runs as `manage.py serve` runs it (uvicorn, ASGI) against the test OpenAI server,
which streams its replies and stamps, on this process's clock, when each request arrived
and when it flushed its first chunk. An HTTP client here (httpx, streaming) asks questions
through the streaming endpoint (as static/app.js does) and stamps the first `delta` event:

    overhead = (client's first delta - request sent) - (provider's first chunk - chat request in)

which is everything but the model's own wait: the request through Django, the credit check,
the question's embedding (the fake embedder answers at once), retrieval and the prompt
(before the chat request), and the relay of the first chunk to the client (after). Target
<= 30 ms at p95.

    LOUPE_DATA_DIR=/tmp/loupe-bench .venv/bin/python bench/stream_overhead.py [--questions 40]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _app import answer_text, make_askers, percentile, serving, setup_django  # noqa: E402

TARGET_MS = 30.0
WARMUP = 3  # the first questions pay for imports and first connections


def ask_once(client, notebook_id: int, question: str, csrf: str) -> tuple[float, float, bool]:
    """Ask through the streaming endpoint: (request sent, first delta received, done seen)."""
    sent = time.perf_counter()
    first = None
    done = False
    with client.stream(
        "POST",
        f"/notebooks/{notebook_id}/ask/stream/",
        data={"question": question},
        headers={"X-CSRFToken": csrf, "HX-Request": "true"},
    ) as response:
        response.raise_for_status()
        for line in response.iter_lines():
            if first is None and line == "event: delta":
                first = time.perf_counter()
            elif line == "event: done":
                done = True
            elif line == "event: error":
                sys.exit(f"the app answered with an error: {response.read()!r}")
    if first is None:
        sys.exit("no delta event in the answer")
    return sent, first, done


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--questions", type=int, default=40)
    args = parser.parse_args()

    import httpx2

    from providers.tests.fake_openai import FakeOpenAI

    with FakeOpenAI.running() as fake:
        # A model that thinks 200 ms, then writes ~50 words a second: the overhead is
        # measured around that wait, so its length only has to be realistic, not exact.
        fake.stream_first_delay = 0.2
        fake.stream_delay = 0.02
        fake.chat_replies.extend(answer_text(30, seed) for seed in range(args.questions + WARMUP))
        setup_django(fake.base_url)
        from django.conf import settings

        asker = make_askers(1, docs_per_user=5, prefix="bench-stream")[0]
        chunks = _chunk_count(asker.notebook_id)

        rows = []
        with (
            serving(fake.base_url, worker=False) as served,
            httpx2.Client(
                base_url=served.url,
                cookies={settings.SESSION_COOKIE_NAME: asker.session},
                timeout=60,
            ) as client,
        ):
            client.get(f"/notebooks/{asker.notebook_id}/").raise_for_status()
            csrf = client.cookies["csrftoken"]
            for index in range(WARMUP + args.questions):
                if index == WARMUP:
                    cpu_before = served.cpu_seconds()["web"]
                question = asker.questions[index % len(asker.questions)]
                mark = len(fake.requests)
                sent, first, done = ask_once(client, asker.notebook_id, question, csrf)
                if not done:
                    sys.exit("the answer ended without a done event")
                calls = fake.requests[mark:]
                embed = [r for r in calls if r.path.endswith("/embeddings")]
                chat = [r for r in calls if r.path.endswith("/chat/completions")]
                if len(embed) != 1 or len(chat) != 1:
                    sys.exit(f"expected one embedding and one chat call, got {len(calls)} calls")
                embedded, chatted = embed[0], chat[0]
                provider_first, embedding_out = chatted.first_chunk_at, embedded.answered_at
                if provider_first is None or embedding_out is None:
                    sys.exit("the test server did not stamp its answers")
                if index < WARMUP:
                    continue
                rows.append(
                    {
                        "total": first - sent,
                        "provider_ttft": provider_first - chatted.received_at,
                        "to_embedding": embedded.received_at - sent,
                        "embedding": embedding_out - embedded.received_at,
                        "retrieval_to_chat": chatted.received_at - embedding_out,
                        "relay": first - provider_first,
                    }
                )
            # CPU, unlike wall time, does not grow with the other work on the machine.
            web_cpu_ms = (served.cpu_seconds()["web"] - cpu_before) / args.questions * 1000
            load_average = " ".join(Path("/proc/loadavg").read_text().split()[:3])

    for row in rows:
        row["overhead"] = row["total"] - row["provider_ttft"]
    report(rows, chunks, web_cpu_ms, load_average)


def _chunk_count(notebook_id: int) -> int:
    from library.models import Chunk

    return Chunk.objects.filter(source__notebooks__id=notebook_id).count()


def report(rows: list[dict[str, float]], chunks: int, web_cpu_ms: float, load_average: str) -> None:
    def ms(key: str, fraction: float) -> float:
        return percentile([row[key] for row in rows], fraction) * 1000

    print(f"{len(rows)} questions (after {WARMUP} warm-up), one notebook of {chunks} chunks")
    print(f"{'ms':<44} {'p50':>7} {'p95':>7}")
    labels = {
        "overhead": "overhead (target p95 <= 30 ms)",
        "to_embedding": "  request in, session, credit, to embedding",
        "embedding": "  question embedding (fake embedder)",
        "retrieval_to_chat": "  retrieval, prompt, to chat request",
        "relay": "  provider's first chunk -> client",
        "provider_ttft": "provider's own time to first token",
        "total": "client: request -> first delta",
    }
    for key, label in labels.items():
        print(f"{label:<44} {ms(key, 0.5):>7.1f} {ms(key, 0.95):>7.1f}")
    print(f"web process CPU per question (whole answer): {web_cpu_ms:.0f} ms")
    print(f"load average at the end: {load_average}")
    p95 = ms("overhead", 0.95)
    print(f"overhead p95 {p95:.1f} ms: " + ("within" if p95 <= TARGET_MS else "OVER") + " target")
    summary = {"bench": "stream_overhead", "questions": len(rows), "chunks": chunks}
    for key in labels:
        summary[f"{key}_p50_ms"] = round(ms(key, 0.5), 1)
        summary[f"{key}_p95_ms"] = round(ms(key, 0.95), 1)
    summary["web_cpu_ms_per_question"] = round(web_cpu_ms, 1)
    summary["target_ms"] = TARGET_MS
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
