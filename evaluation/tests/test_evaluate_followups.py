"""`manage.py evaluate --followups`: follow-up questions searched as asked and as rewritten
by the chat model, both figures printed."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from billing.models import Usage
from library.models import Source

pytestmark = pytest.mark.django_db(transaction=True)

DOCS = {
    # "capital" and "its" often: the bare follow-up "What is its capital?" lands here.
    "france": "Paris is the capital of France. Its capital is its largest city; its capital "
    "has a tower.",
    "germany": "Berlin is the capital of Germany, a federal republic in central Europe with "
    "sixteen states, many rivers and forests.",
}
FOLLOWUPS = [
    {
        "doc_id": "germany",
        "turns": [
            {"role": "user", "content": "Tell me about Germany."},
            {"role": "assistant", "content": "Germany is a federal republic [1]."},
        ],
        "question": "What is its capital?",
        "answers": ["Berlin"],
    },
    {
        "doc_id": "france",
        "turns": [{"role": "user", "content": "Hello"}, {"role": "assistant", "content": "Hi"}],
        "question": "Which city is the capital of France?",
        "answers": ["Paris"],
    },
]


@pytest.fixture
def followup_set(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    for doc_id, text in DOCS.items():
        (docs / f"{doc_id}.txt").write_text(text)
    path = tmp_path / "followups.jsonl"
    path.write_text("\n".join(json.dumps(item) for item in FOLLOWUPS))
    return path, docs


def run(path, docs, *options) -> str:
    out = StringIO()
    call_command("evaluate", "--followups", str(path), "--docs", str(docs), *options, stdout=out)
    return out.getvalue()


def test_followups_are_measured_with_the_rewrite_off_and_on(fake_openai, followup_set):
    fake_openai.chat_replies.append("What is the capital of Germany?")
    # The second rewrite fails (both attempts): that question is searched as asked.
    fake_openai.fail_next("500", times=2, endpoint="chat/completions", skip=1)

    figures = json.loads(run(*followup_set, "--json"))["followups"]

    off, on = figures["rewrite_off"], figures["rewrite_on"]
    # As asked, "What is its capital?" finds France's chunk first and Germany's second.
    assert (off["recall@1"], off["recall@8"], off["mrr@8"]) == (0.5, 1.0, 0.75)
    assert (on["recall@1"], on["recall@8"], on["mrr@8"]) == (1.0, 1.0, 1.0)
    assert off["questions"] == on["questions"] == 2
    assert (on["rewritten"], on["rewrite_failures"]) == (1, 1)
    assert on["rewrite_p95_ms"] > 0
    # Each rewrite went to the chat model with its own turns; the one that answered is billed.
    prompts = [r.body["messages"][-1]["content"] for r in fake_openai.chat_requests]
    assert "User: Tell me about Germany." in prompts[0]
    assert "Last question: What is its capital?" in prompts[0]
    assert Usage.objects.filter(kind="chat").count() == 1


def test_a_doc_id_may_name_a_file_of_the_folder(fake_openai, tmp_path):
    # A PDF, say, as the page-gold sets name theirs ("debian-reference.en.pdf").
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "germany.md").write_text("# Germany\n\n" + DOCS["germany"])
    path = tmp_path / "followups.jsonl"
    path.write_text(json.dumps({**FOLLOWUPS[0], "doc_id": "germany.md"}))
    fake_openai.chat_replies.append("What is the capital of Germany?")

    figures = json.loads(run(path, docs, "--json"))["followups"]

    assert figures["rewrite_on"]["recall@1"] == 1.0
    assert Source.objects.get().filename == "germany.md"


def test_the_readable_report_shows_both_columns(fake_openai, followup_set):
    fake_openai.chat_replies += ["What is the capital of Germany?", "capital of France"]

    text = run(*followup_set)

    assert "2 follow-up questions" in text
    assert "rewrite on: 2 changed, 0 failed" in text
    assert "  recall@1   0.500   1.000" in text


def test_qa_and_followups_together_print_both(fake_openai, followup_set, tmp_path):
    path, docs = followup_set
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"doc_id": "france", "question": "Paris?", "answers": ["Paris"]}))
    fake_openai.chat_replies += ["What is the capital of Germany?", "capital of France"]

    figures = json.loads(run(path, docs, "--qa", str(items), "--json"))

    assert figures["questions"] == 1 and figures["recall@1"] == 1.0
    assert figures["followups"]["rewrite_on"]["questions"] == 2


def test_followups_need_a_chat_model_and_say_so_before_reading_anything(
    fake_openai, followup_set, settings
):
    settings.CHAT_MODEL = ""

    with pytest.raises(CommandError, match="needs a chat model"):
        run(*followup_set)

    assert not Source.objects.exists()


@pytest.mark.parametrize(
    "line",
    [
        {"doc_id": "france", "question": "Why?", "answers": ["Paris"]},  # no turns
        {"doc_id": "france", "turns": [], "question": "Why?", "answers": ["Paris"]},
        {"doc_id": "france", "turns": [{"role": "system", "content": "x"}], "question": "Why?",
         "answers": ["Paris"]},
    ],
)  # fmt: skip
def test_a_malformed_followup_line_is_an_error_naming_it(fake_openai, tmp_path, line):
    path = tmp_path / "followups.jsonl"
    path.write_text(json.dumps(FOLLOWUPS[0]) + "\n" + json.dumps(line))

    with pytest.raises(CommandError, match=r"followups.jsonl, line 2: expected doc_id, turns"):
        run(path, tmp_path)


def test_neither_question_set_is_an_error(fake_openai, tmp_path):
    with pytest.raises(CommandError, match="Give --qa"):
        call_command("evaluate", "--docs", str(tmp_path))
