import json
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from ingest.loaders import load_passages
from ingest.tests import office_files
from ingest.tests.data import PDFS
from library.models import Source
from notebooks.models import Notebook

FOUR_PAGES = str(PDFS / "sample-files/pdflatex-4-pages.pdf")
SCAN = str(PDFS / "sample-files/cmyk-image.pdf")
RESULT_KEYS = {"source_id", "name", "kind", "status", "pages", "chunks", "error"}
CITATION_KEYS = {
    "n", "chunk_id", "source_id", "source", "page", "quote", "similarity", "supported", "attributed"
}  # fmt: skip

pytestmark = pytest.mark.django_db(transaction=True)


def ingest(*paths: str, user: str = "u", notebook: str = "N", out=None) -> list[dict]:
    out = out or StringIO()
    arguments = [*paths, "--user", user, "--notebook", notebook, "--json"]
    call_command("ingest", *arguments, stdout=out, stderr=StringIO())
    return [json.loads(line) for line in out.getvalue().splitlines()]


def ask(question: str, *options: str) -> str:
    out = StringIO()
    call_command("ask", "--user", "u", "--notebook", "N", *options, question, stdout=out)
    return out.getvalue()


def test_ingest_creates_the_user_and_notebook_and_prints_one_json_line(fake_openai):
    [result] = ingest(FOUR_PAGES)

    user = get_user_model().objects.get(username="u")
    assert not user.has_usable_password()
    assert Notebook.objects.filter(owner=user, title="N").exists()
    assert set(result) == RESULT_KEYS
    source = Source.objects.get(pk=result["source_id"])
    assert result == {
        "source_id": source.pk,
        "name": "pdflatex-4-pages.pdf",
        "kind": "pdf",
        "status": "ready",
        "pages": 4,
        "chunks": source.chunk_count,
        "error": "",
    }
    assert source.chunk_count > 0


def test_ingesting_the_same_file_again_links_the_ready_source(fake_openai):
    [first] = ingest(FOUR_PAGES)
    requests = len(fake_openai.requests)

    [again] = ingest(FOUR_PAGES)

    assert again == first
    assert len(fake_openai.requests) == requests
    assert Source.objects.count() == 1


def test_a_failing_file_makes_ingest_exit_1_with_its_error_in_its_line(fake_openai):
    out = StringIO()
    with pytest.raises(SystemExit) as exit_:
        ingest(FOUR_PAGES, SCAN, "/nonexistent/missing.pdf", out=out)

    assert exit_.value.code == 1
    good, scan, missing = (json.loads(line) for line in out.getvalue().splitlines())
    assert good["status"] == "ready"
    assert (scan["name"], scan["status"]) == ("cmyk-image.pdf", "failed")
    assert "No text could be read" in scan["error"]
    assert "capture mode 'auto'" in scan["error"]
    assert (missing["status"], missing["source_id"]) == ("failed", None)
    assert "no such file" in missing["error"]


def test_ask_prints_the_answer_and_citations_from_the_pdf_as_json(fake_openai):
    ingest(FOUR_PAGES)
    fake_openai.chat_replies.append("The text has no meaning [1]. It shows the font [2][99].")

    payload = json.loads(ask("Does the text have a meaning?", "--json"))

    assert set(payload) == {
        "answer",
        "mode",
        "conversation_id",
        "search_query",
        "source_ids",
        "citations",
        "unsupported",
    }
    assert payload["source_ids"] is None  # nothing unticked: all the notebook's sources
    assert payload["search_query"] == "Does the text have a meaning?"  # searched as asked
    assert payload["answer"] == "The text has no meaning [1]. It shows the font [2]."
    assert payload["mode"] == "llm"
    assert [citation["n"] for citation in payload["citations"]] == [1, 2]
    source = Source.objects.get()
    pages = {
        passage.page: passage.text for passage in load_passages("pdf", Path(FOUR_PAGES)).passages
    }
    for citation in payload["citations"]:
        assert set(citation) == CITATION_KEYS
        assert (citation["source_id"], citation["source"]) == (source.pk, "pdflatex-4-pages")
        assert citation["page"] in pages
        assert citation["quote"] in pages[citation["page"]]
        assert citation["quote"] in source.chunks.get(pk=citation["chunk_id"]).text
        assert isinstance(citation["supported"], bool)
        assert isinstance(citation["similarity"], float)


def test_ask_prints_plain_text_without_json(fake_openai):
    ingest(FOUR_PAGES)
    fake_openai.chat_replies.append("It has no meaning [1].")

    output = ask("Does the text have a meaning?")

    lines = output.splitlines()
    assert lines[0] == "It has no meaning [1]."
    assert lines[1].startswith("[1] pdflatex-4-pages, page ")
    assert "(similarity " in lines[1]


def test_ask_names_the_slide_a_citation_is_on(fake_openai, tmp_path):
    deck = office_files.pptx(
        tmp_path / "otters.pptx",
        [("Otters", "Sea otters hold hands while they sleep.", ""), ("Herons", "Herons fish.", "")],
    )
    [result] = ingest(str(deck))
    assert result["kind"] == "document"
    fake_openai.chat_replies.append("They hold hands [1].")

    output = ask("What do sea otters do while they sleep?")

    assert output.splitlines()[1].startswith("[1] otters, slide 1 (similarity ")


def test_ask_names_a_missing_user_or_notebook(fake_openai):
    with pytest.raises(CommandError, match="no user 'u'"):
        ask("Anything?")

    ingest(FOUR_PAGES, notebook="Other")
    with pytest.raises(CommandError, match="no notebook 'N'"):
        ask("Anything?")
