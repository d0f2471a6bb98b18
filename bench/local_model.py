"""The local model in the box, as `serve` runs it, answering manual-qa's questions on this
machine: how soon the reader sees the evidence, how soon the first word, what Loupe's
prompt costs against the least prompt that could answer, and how much memory it all takes.

Per question, interleaved (the order swapped every question, so load and the server's
prompt cache fall on both alike):

- Loupe: `stream_answer` as the streaming view runs it; stamped when the Evidence (the
  passages, shown before the answer) is ready and when the first word arrives.
- Minimal: the same server asked, streamed, with a one-line instruction, the question and
  the one gold passage (the chunk of the gold page that holds the gold quote); stamped at
  its first word. The ratio Loupe ÷ minimal is what Loupe's retrieval and prompt add
  (target ≤ 2×).

`--variants 8x160,4x160,8x80` asks the questions again under each variant (the passages
given, RETRIEVAL_K, times CHAT_PASSAGE_TOKENS, the part of each given), each on a model
server of its own with its own minimal prompts: a summary line each. Asked in turn on one
server, a question's second variant found the first's prompts in the server's prompt cache
(the minimal one whole: 0.1 s).

Also: Loupe's prompt tokens per answer (as the server counted them), the whole answer's
time, whether the gold page is cited (the answer's quality beside its speed), the peak RSS
of this process (Loupe's web side) plus the model server's (target ≤ 3 GB together), and with
`--report` the time to make a report of the whole manual.

The manual (../shared/data/manual-qa/debian-reference.en.pdf) must be a ready source in the
data folder (`manage.py ingest` it once; /tmp/loupe-eval has it from `evaluate`).

    LOUPE_DATA_DIR=/tmp/loupe-eval .venv/bin/python bench/local_model.py [--questions 10] [--report]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _setup import SHARED, django_setup, local_model_server  # noqa: E402

MANUAL = "debian-reference.en.pdf"
MINIMAL_SYSTEM = "Answer the question from the passage, in one or two sentences."


def peak_rss_mb(pid: int | str = "self") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--questions", type=int, default=10)
    parser.add_argument("--model", default="auto", help="LOCAL_CHAT_MODEL (auto: the default)")
    parser.add_argument("--report", action="store_true", help="also time a report")
    parser.add_argument(
        "--variants",
        default="",
        help="passages x tokens each, comma-separated (e.g. 8x160,4x160): asked in turn",
    )
    arguments = parser.parse_args()
    django_setup()

    from django.conf import settings

    settings.LOCAL_CHAT_MODEL = arguments.model
    variants = [v for v in arguments.variants.split(",") if v] or [""]
    for number, variant in enumerate(variants, start=1):
        # No chat model configured (the server before pointed them at itself): the local one.
        settings.OPENAI_BASE_URL = settings.CHAT_BASE_URL = settings.CHAT_MODEL = ""
        # A server of its own for each variant: the prompt cache kept the last variant's
        # prompts for the same questions (the minimal one whole, Loupe's first passages).
        with local_model_server() as server:
            if variant:
                passages, tokens = variant.split("x")
                settings.RETRIEVAL_K, settings.CHAT_PASSAGE_TOKENS = int(passages), int(tokens)
            label = f"{settings.RETRIEVAL_K}x{settings.CHAT_PASSAGE_TOKENS}"
            rows, (user, notebook) = run(arguments, server, label)
            summary = {"variant": label, **summarised(rows)}
            if number == len(variants):
                if arguments.report:
                    summary["report_s"] = round(make_report(user, notebook), 1)
                assert server.process is not None
                rss = {"loupe": peak_rss_mb(), "model_server": peak_rss_mb(server.process.pid)}
                summary["peak_rss_mb"] = {
                    **{name: round(mb) for name, mb in rss.items()},
                    "together": round(sum(rss.values())),
                }
            print(json.dumps(summary), flush=True)


def run(arguments: argparse.Namespace, server, label: str) -> tuple[list[dict], tuple]:
    """The questions asked through Loupe and the minimal prompt, in turn: a row each."""
    from openai import OpenAI

    from billing.models import Usage
    from generation.answering import Answer, Evidence, stream_answer
    from library.models import Chunk, Source
    from notebooks.models import Notebook, NotebookSource

    source = Source.objects.filter(filename=MANUAL, status=Source.Status.READY).first()
    if source is None:
        sys.exit(f"{MANUAL} is not a ready source here: ingest it first")
    user = source.owner
    notebook, _ = Notebook.objects.get_or_create(owner=user, title="Local model bench")
    NotebookSource.objects.get_or_create(
        notebook=notebook, source=source, defaults={"added_by": user}
    )
    questions = [
        json.loads(line)
        for line in (SHARED / "manual-qa" / "questions.jsonl").read_text().splitlines()
        if line.strip()
    ]
    questions = [q for q in questions if q["doc"] == MANUAL][: arguments.questions]
    client = OpenAI(base_url=server.base_url, api_key="none")

    def gold_passage(item: dict) -> str:
        words = set(item["quote"].lower().split())
        chunks = Chunk.objects.filter(source=source, page=item["page"])
        best = max(chunks, key=lambda c: len(words & set(c.text.lower().split())), default=None)
        return best.text if best else item["quote"]

    def loupe(item: dict) -> dict:
        started = time.perf_counter()
        evidence = first = None
        answer: Answer | None = None
        for part in stream_answer(
            user=user, notebook=notebook, question=item["question"], evidence=True
        ):
            now = time.perf_counter() - started
            if isinstance(part, Evidence):
                evidence = now
            elif isinstance(part, Answer):
                answer = part
            elif first is None and part.strip():
                first = now
        total = time.perf_counter() - started
        assert answer is not None
        usage = Usage.objects.filter(kind=Usage.Kind.CHAT).order_by("-id").first()
        gold = {item["page"], *item.get("also_answered_on", [])}
        # As `evaluate --pages --answers` counts: a citation of a gold page, and whether
        # the support check verified one.
        return {
            "evidence": evidence,
            "first_word": first,
            "total": total,
            "prompt_tokens": usage.input_tokens if usage else 0,
            "gold_cited": any(c.page in gold for c in answer.citations),
            "gold_verified": any(c.page in gold and c.supported for c in answer.citations),
            "mode": answer.message.mode,
            "answer": answer.message.content,
        }

    def minimal(item: dict) -> float:
        started = time.perf_counter()
        stream = client.chat.completions.create(
            model=server.plan.chat_model,
            messages=[
                {"role": "system", "content": MINIMAL_SYSTEM},
                {
                    "role": "user",
                    "content": f"Passage: {gold_passage(item)}\n\nQuestion: {item['question']}",
                },
            ],
            stream=True,
            max_tokens=40,
        )
        first = None
        for chunk in stream:
            if first is None and chunk.choices and (chunk.choices[0].delta.content or "").strip():
                first = time.perf_counter() - started
        return first or time.perf_counter() - started

    rows = []
    for index, item in enumerate(questions):
        if index % 2:
            base = minimal(item)
            ours = loupe(item)
        else:
            ours = loupe(item)
            base = minimal(item)
        ours["minimal_first_word"] = base
        ours["ratio"] = (ours["first_word"] or ours["total"]) / base
        rows.append(ours)
        print(
            f"{item['id']} {label}: evidence {ours['evidence']:.2f} s, "
            f"first word {ours['first_word'] or 0:.1f} s "
            f"(minimal {base:.1f} s, {ours['ratio']:.2f}×), whole {ours['total']:.1f} s, "
            f"prompt {ours['prompt_tokens']} tokens, gold page cited: {ours['gold_cited']} "
            f"(verified: {ours['gold_verified']})\n"
            f"    {ours['answer'][:300]!r}",
            flush=True,
        )
    return rows, (user, notebook)


def summarised(rows: list[dict]) -> dict:
    return {
        "questions": len(rows),
        "evidence_p50_s": round(statistics.median(r["evidence"] for r in rows), 3),
        "evidence_max_s": round(max(r["evidence"] for r in rows), 3),
        "first_word_ratio_p50": round(statistics.median(r["ratio"] for r in rows), 2),
        "first_word_ratio_max": round(max(r["ratio"] for r in rows), 2),
        "prompt_tokens_p50": statistics.median(r["prompt_tokens"] for r in rows),
        "answer_p50_s": round(statistics.median(r["total"] for r in rows), 1),
        "gold_cited": sum(r["gold_cited"] for r in rows),
        "gold_verified": sum(r["gold_verified"] for r in rows),
        "marker_only_or_empty": sum(1 for r in rows if not r["answer"].strip("[]0-9 ")),
    }


def make_report(user, notebook) -> float:
    from generation.documents.models import GeneratedDocument
    from generation.documents.services import generate_document

    document = GeneratedDocument.objects.create(notebook=notebook, owner=user, kind="report")
    started = time.perf_counter()
    generate_document(document_id=document.pk)
    took = time.perf_counter() - started
    document.refresh_from_db()
    print(
        f"report: {document.status} in {took:.0f} s {document.error}\n"
        + document.data.get("markdown", "")[:3000]
    )
    return took


if __name__ == "__main__":
    main()
