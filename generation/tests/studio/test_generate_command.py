"""manage.py generate: makes one document through the queue, waits, prints it."""

import json

import pytest
from django.core.management import CommandError, call_command

from generation.documents.models import GeneratedDocument
from generation.tests.studio.conftest import is_mp3, reply


@pytest.mark.django_db(transaction=True)
def test_generate_json_runs_the_job_and_prints_the_document(
    fake_openai, capsys, owner, notebook, studio_sources
):
    # The second sentence has no marker: Loupe places one, and says so.
    markdown = "Herons nest in heronries [1]. Sleeper cabins hold one to three beds."
    fake_openai.chat_replies.append(reply({"title": "R", "markdown": markdown}))

    call_command(
        "generate", "--user", "owner", "--notebook", "Research", "--kind", "report", "--json"
    )

    result = json.loads(capsys.readouterr().out)
    document = GeneratedDocument.objects.get()
    citations = result.pop("citations")
    assert [(cited["n"], cited["attributed"]) for cited in citations] == [(1, False), (2, True)]
    assert citations[1]["source_title"] == "trains"
    assert "Sleeper cabins hold one to three beds" in citations[1]["quote"]
    assert result == {
        "id": document.pk,
        "kind": "report",
        "status": "ready",
        "mode": "llm",
        "error": "",
        "title": "R",
        "source_ids": None,  # nothing unticked: all the notebook's sources
        "content": {
            "title": "R",
            "markdown": "Herons nest in heronries [1]. Sleeper cabins hold one to three beds [2].",
        },
        "unsupported_dropped": 0,
    }
    assert document.source.chunks.exists()  # waited for the indexing too


@pytest.mark.django_db(transaction=True)
def test_generate_exits_1_when_the_document_failed(fake_openai, capsys, owner, notebook):
    with pytest.raises(SystemExit) as exited:
        call_command(
            "generate", "--user", "owner", "--notebook", "Research", "--kind", "quiz", "--json"
        )

    assert exited.value.code == 1
    result = json.loads(capsys.readouterr().out)
    assert result["status"] == "failed" and "no ready sources" in result["error"]


@pytest.mark.django_db(transaction=True)
def test_generate_audio_prints_the_mp3_path(
    fake_openai, settings, capsys, owner, notebook, studio_sources
):
    fake_openai.chat_replies.append(
        reply(
            {
                "title": "A",
                "turns": [{"speaker": "A", "text": "Hi."}, {"speaker": "B", "text": "Herons."}],
            }
        )
    )

    call_command(
        "generate", "--user", "owner", "--notebook", "Research", "--kind", "audio", "--json"
    )

    result = json.loads(capsys.readouterr().out)
    assert result["content"].endswith(".mp3")
    with open(result["content"], "rb") as handle:
        assert is_mp3(handle.read())


def test_generate_names_a_missing_notebook(db, owner):
    with pytest.raises(CommandError, match="owner has no notebook 'Nope'"):
        call_command("generate", "--user", "owner", "--notebook", "Nope", "--kind", "report")
