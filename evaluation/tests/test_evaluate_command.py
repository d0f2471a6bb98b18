import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from evaluation.recall import percentile
from notebooks.models import Notebook

pytestmark = pytest.mark.django_db(transaction=True)

DOCS = {
    "herons": "Grey herons wait\nat the edge of the pond.",
    "bread": "Sourdough bread needs a starter and flour.",
    "moss": "Moss grows on the north side of old trees.",
}
ITEMS = [
    # Found first: the chunk shares most words with the question. The answer's trailing
    # space and the document's line break do not matter.
    ("herons", "Where do grey herons wait?", "wait at the edge "),
    ("bread", "What does sourdough bread need?", "needs a starter"),
    # Found second: the bread chunk shares more words with the question.
    ("herons", "Sourdough bread starter flour, grey herons wait?", "Grey herons"),
    # No chunk contains this answer: a miss, reported as unanswerable.
    ("moss", "Where does moss grow?", "on the south side"),
]


@pytest.fixture
def qa_set(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    for doc_id, text in DOCS.items():
        (docs / f"{doc_id}.txt").write_text(text)
    items = tmp_path / "items.jsonl"
    items.write_text(
        "\n".join(
            json.dumps({"doc_id": doc, "question": question, "answers": [answer]})
            for doc, question, answer in ITEMS
        )
    )
    return items, docs


def evaluate(items, docs, *options) -> dict:
    out = StringIO()
    call_command(
        "evaluate", "--qa", str(items), "--docs", str(docs), "--json", *options, stdout=out
    )
    return json.loads(out.getvalue())


@pytest.mark.parametrize("mode", ["dense", "hybrid"])
def test_evaluate_prints_recall_mrr_and_latency_computed_by_hand(
    fake_openai, qa_set, settings, mode
):
    settings.RETRIEVAL_MODE = mode

    figures = evaluate(*qa_set)

    # Ranks 1, 1, 2 and a miss out of four questions.
    assert figures["recall@1"] == 0.5
    assert figures["recall@4"] == 0.75
    assert figures["recall@8"] == 0.75
    assert figures["mrr@8"] == pytest.approx((1 + 1 + 1 / 2) / 4, abs=1e-4)
    assert figures["questions"] == 4
    assert figures["chunks"] == 3
    assert figures["unanswerable"] == 1
    assert 0 < figures["search_p50_ms"] <= figures["p50_ms"] <= figures["p95_ms"]


def test_a_smaller_k_cuts_the_list(fake_openai, qa_set):
    figures = evaluate(*qa_set, "--k", "1")

    assert figures["recall@1"] == 0.5
    assert figures["mrr@1"] == 0.5
    assert "recall@4" not in figures


def test_a_second_run_links_the_documents_and_embeds_only_the_questions(fake_openai, qa_set):
    evaluate(*qa_set)
    before = len(fake_openai.embedding_requests)

    evaluate(*qa_set)

    assert len(fake_openai.embedding_requests) - before == len(ITEMS)
    # Each run's notebook is removed; the documents stay in the library.
    assert not Notebook.objects.exists()


def test_a_missing_document_is_an_error_naming_it(fake_openai, qa_set):
    items, docs = qa_set
    (docs / "moss.txt").unlink()

    with pytest.raises(CommandError, match="moss.txt: no such document"):
        evaluate(items, docs)


def test_the_readable_report_names_every_figure(fake_openai, qa_set):
    items, docs = qa_set
    out = StringIO()
    call_command("evaluate", "--qa", str(items), "--docs", str(docs), stdout=out)

    text = out.getvalue()
    assert "4 questions over 3 chunks" in text
    assert "1 unanswerable" in text
    for name in ("recall@1", "recall@4", "recall@8", "mrr@8", "p95"):
        assert name in text


def test_percentile_is_the_nearest_rank():
    assert percentile([], 95) == 0.0
    assert percentile([3.0, 1.0, 2.0], 50) == 2.0
    assert percentile([float(n) for n in range(1, 101)], 95) == 95.0
