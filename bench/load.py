"""Load: 50 signed-in users ask questions through the streaming endpoint
while a 117-page PDF is ingested, for 60 s. Errors (target 0), p95 of the notebook page and
of the first answer token, and the peak memory of the web and worker processes.

The app runs as `manage.py serve` runs it (uvicorn and a Procrastinate worker). The model
is the test OpenAI server in a process of its own, with a realistic pace: the first token
after 300 ms, then 30 tokens (words) a second; embeddings at once. Each user, in a loop,
opens the notebook page, asks a question of its three covid-qa documents (continuing the
conversation, as the page does), reads the answer's events to the end, fetches the stored
message (as static/app.js does) and waits a second. One more user uploads the PDF at the
start (capture mode text) and has it read again each time it is ready, so the worker is
busy the whole time.

    LOUPE_DATA_DIR=/tmp/loupe-bench .venv/bin/python bench/load.py [--users 50] [--seconds 60]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import random
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _app import (  # noqa: E402
    Asker,
    answer_text,
    make_askers,
    percentile,
    serving,
    setup_django,
    sign_in,
)
from _setup import SHARED  # noqa: E402

PDF = SHARED / "pdfs" / "sample-files" / "GeoTopo-komprimiert.pdf"
INGEST_USER = "bench-load-ingest"


@dataclass
class Results:
    page: list[float] = field(default_factory=list)
    first_token: list[float] = field(default_factory=list)
    answer: list[float] = field(default_factory=list)
    message: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    ingests: list[tuple[float, str]] = field(default_factory=list)
    connections: list[int] = field(default_factory=list)


def fake_server(first_token: float, tokens_per_second: float, words: int) -> None:
    """Run the test OpenAI server (in this child process) until stdin closes."""
    from providers.tests.fake_openai import FakeOpenAI

    with FakeOpenAI.running() as fake:
        fake.stream_first_delay = first_token
        fake.stream_delay = 1 / tokens_per_second
        # Enough replies for any run; an empty queue would answer with a fixed sentence.
        fake.chat_replies.extend(answer_text(words, seed) for seed in range(20000))
        print(fake.base_url, flush=True)
        sys.stdin.read()


async def user_loop(
    url: str, asker: Asker, deadline: float, think: float, results: Results
) -> None:
    import httpx2
    from django.conf import settings

    await asyncio.sleep(random.uniform(0, 2))  # people do not all arrive in one instant
    cookies = {settings.SESSION_COOKIE_NAME: asker.session}
    conversation = ""
    questions = itertools.cycle(asker.questions)
    async with httpx2.AsyncClient(base_url=url, cookies=cookies, timeout=30) as client:
        while time.perf_counter() < deadline:
            try:
                started = time.perf_counter()
                page_url = f"/notebooks/{asker.notebook_id}/"
                if conversation:
                    page_url += f"conversations/{conversation}/"
                page = await client.get(page_url)
                if page.status_code != 200:
                    results.errors[f"page HTTP {page.status_code}"] += 1
                    continue
                results.page.append(time.perf_counter() - started)
                done = await ask(client, asker, next(questions), conversation, results)
                if done is not None:
                    conversation = str(done["conversation"])
                    started = time.perf_counter()
                    shown = await client.get(done["message_url"], headers={"HX-Request": "true"})
                    if shown.status_code != 200:
                        results.errors[f"message HTTP {shown.status_code}"] += 1
                    else:
                        results.message.append(time.perf_counter() - started)
            except Exception as exc:  # noqa: BLE001 - every failure is a counted error
                results.errors[type(exc).__name__] += 1
            await asyncio.sleep(think)


async def ask(
    client: Any, asker: Asker, question: str, conversation: str, results: Results
) -> dict[str, Any] | None:
    """One streamed question, as static/app.js asks it; the `done` event's data, or None."""
    form = {"question": question, "conversation": conversation}
    headers = {"X-CSRFToken": client.cookies["csrftoken"], "HX-Request": "true"}
    started = time.perf_counter()
    first = None
    done = None
    name = ""
    async with client.stream(
        "POST", f"/notebooks/{asker.notebook_id}/ask/stream/", data=form, headers=headers
    ) as response:
        if response.status_code != 200:
            results.errors[f"ask HTTP {response.status_code}"] += 1
            return None
        async for line in response.aiter_lines():
            if line.startswith("event: "):
                name = line[7:]
                if name == "delta" and first is None:
                    first = time.perf_counter() - started
            elif line.startswith("data: ") and name in {"done", "error"}:
                data = json.loads(line[6:])
                if name == "error":
                    results.errors[f"error event: {data['error'][:60]}"] += 1
                    return None
                done = data
    if first is None or done is None:
        results.errors["answer ended without " + ("a delta" if first is None else "done")] += 1
        return None
    results.first_token.append(first)
    results.answer.append(time.perf_counter() - started)
    return done


def _ingest_state() -> tuple[int | None, str, str]:
    from library.models import Source

    source = Source.objects.filter(owner__username=INGEST_USER).first()
    if source is None:
        return None, "", ""
    finished = source.is_finished and not source.stage
    return source.pk, source.status if finished else "busy", source.error


async def ingest_loop(url: str, session: str, notebook_id: int, deadline: float, results: Results):
    """Upload the PDF, then read it again each time it is ready, until the deadline."""
    import httpx2
    from django.conf import settings

    cookies = {settings.SESSION_COOKIE_NAME: session}
    async with httpx2.AsyncClient(base_url=url, cookies=cookies, timeout=60) as client:
        (await client.get(f"/notebooks/{notebook_id}/")).raise_for_status()
        headers = {"X-CSRFToken": client.cookies["csrftoken"]}
        started = time.perf_counter()
        response = await client.post(
            f"/notebooks/{notebook_id}/upload/",
            data={"pdf_capture": "text"},
            files={"files": (PDF.name, PDF.read_bytes(), "application/pdf")},
            headers=headers,
        )
        if response.status_code != 302:
            results.errors[f"upload HTTP {response.status_code}"] += 1
            return
        while True:
            await asyncio.sleep(0.25)
            source_id, state, error = await asyncio.to_thread(_ingest_state)
            if state in {"ready", "failed"}:
                results.ingests.append((time.perf_counter() - started, state))
                if state == "failed":
                    results.errors[f"ingest failed: {error[:60]}"] += 1
                if time.perf_counter() > deadline:
                    return
                started = time.perf_counter()
                response = await client.post(
                    f"/notebooks/{notebook_id}/sources/{source_id}/reprocess/", headers=headers
                )
                if response.status_code != 302:
                    results.errors[f"reprocess HTTP {response.status_code}"] += 1
                    return
            elif time.perf_counter() > deadline + 120:
                results.errors["ingest did not finish"] += 1
                return


def _connections() -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' "
            "AND datname = current_database()"
        )
        return int(cursor.fetchone()[0])


async def watch_connections(deadline: float, results: Results) -> None:
    while time.perf_counter() < deadline:
        results.connections.append(await asyncio.to_thread(_connections))
        await asyncio.sleep(1)


async def run(
    url: str,
    askers: list[Asker],
    ingester: tuple[str, int],
    seconds: float,
    think: float,
) -> Results:
    results = Results()
    deadline = time.perf_counter() + seconds
    ingest = asyncio.create_task(ingest_loop(url, *ingester, deadline, results))
    await asyncio.gather(
        watch_connections(deadline, results),
        *(user_loop(url, asker, deadline, think, results) for asker in askers),
    )
    await ingest  # the last ingest ends after the deadline
    return results


def make_ingester() -> tuple[str, int]:
    """A fresh user (the same PDF from the same owner would be linked, not read) and notebook."""
    from django.contrib.auth import get_user_model

    from notebooks.models import Notebook

    get_user_model().objects.filter(username=INGEST_USER).delete()
    user = get_user_model().objects.create_user(username=INGEST_USER)
    notebook = Notebook.objects.create(owner=user, title="Load")
    return sign_in(user), notebook.pk


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--think", type=float, default=1.0, help="seconds between questions")
    parser.add_argument("--first-token", type=float, default=0.3)
    parser.add_argument("--tokens-per-second", type=float, default=30)
    parser.add_argument("--answer-words", type=int, default=60)
    parser.add_argument("--fake-server", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.fake_server:
        fake_server(args.first_token, args.tokens_per_second, args.answer_words)
        return

    fake = subprocess.Popen(
        [
            sys.executable,
            __file__,
            "--fake-server",
            f"--first-token={args.first_token}",
            f"--tokens-per-second={args.tokens_per_second}",
            f"--answer-words={args.answer_words}",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert fake.stdout is not None
        base_url = fake.stdout.readline().strip()
        setup_django(base_url)
        print(f"preparing {args.users} users with notebooks ...", flush=True)
        askers = make_askers(args.users)
        ingester = make_ingester()
        with serving(base_url, worker=True) as served:
            print(
                f"{args.users} users for {args.seconds:.0f} s against {served.url} "
                f"(pids {served.pids}); load average {_load_average()}",
                flush=True,
            )
            cpu_before = served.cpu_seconds()
            results = asyncio.run(run(served.url, askers, ingester, args.seconds, args.think))
            cpu = {
                name: seconds - cpu_before[name] for name, seconds in served.cpu_seconds().items()
            }
            memory = served.peak_rss_mb()
            print(f"load average after: {_load_average()}")
    finally:
        assert fake.stdin is not None
        fake.stdin.close()
        fake.wait(timeout=10)
    report(args, results, memory, cpu)


def _load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def report(
    args: argparse.Namespace, results: Results, memory: dict[str, float], cpu: dict[str, float]
) -> None:
    def ms(values: list[float], fraction: float) -> float:
        return percentile(values, fraction) * 1000

    errors = sum(results.errors.values())
    print(
        f"{args.users} users, {args.seconds:.0f} s, think {args.think} s; model: first token "
        f"{args.first_token * 1000:.0f} ms, {args.tokens_per_second:.0f} tokens/s, "
        f"{args.answer_words} words"
    )
    print(f"{'':<34} {'count':>6} {'p50 ms':>8} {'p95 ms':>8}")
    for label, values in [
        ("notebook page", results.page),
        ("first answer token", results.first_token),
        ("whole answer (stream)", results.answer),
        ("stored message (htmx)", results.message),
    ]:
        print(f"{label:<34} {len(values):>6} {ms(values, 0.5):>8.0f} {ms(values, 0.95):>8.0f}")
    print(f"errors: {errors} (target 0) {dict(results.errors) or ''}")
    ingests = ", ".join(f"{seconds:.1f} s {state}" for seconds, state in results.ingests)
    print(f"PDF ingests ({PDF.name}), queued -> ready: {ingests or 'none finished'}")
    print(f"peak RSS: web {memory.get('web', 0):.0f} MB, worker {memory.get('worker', 0):.0f} MB")
    questions = max(1, len(results.first_token))
    print(
        f"CPU used: web {cpu.get('web', 0):.1f} s ({cpu.get('web', 0) / questions * 1000:.0f} ms "
        f"per question with its page and message), worker {cpu.get('worker', 0):.1f} s"
    )
    print(f"database connections (client backends), peak: {max(results.connections, default=0)}")
    print(
        json.dumps(
            {
                "bench": "load",
                "users": args.users,
                "seconds": args.seconds,
                "questions": len(results.first_token),
                "errors": errors,
                "page_p50_ms": round(ms(results.page, 0.5)),
                "page_p95_ms": round(ms(results.page, 0.95)),
                "first_token_p50_ms": round(ms(results.first_token, 0.5)),
                "first_token_p95_ms": round(ms(results.first_token, 0.95)),
                "ingests_s": [round(seconds, 1) for seconds, _ in results.ingests],
                "web_peak_rss_mb": round(memory.get("web", 0)),
                "worker_peak_rss_mb": round(memory.get("worker", 0)),
                "peak_db_connections": max(results.connections, default=0),
                "web_cpu_s": round(cpu.get("web", 0), 1),
                "worker_cpu_s": round(cpu.get("worker", 0), 1),
            }
        )
    )


if __name__ == "__main__":
    main()
