"""Management commands take a user and a notebook title (and, for ask, a source id):
they never reach into another user's notebooks or sources."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from library.models import Source
from notebooks.models import Message, Notebook, NotebookSource

SECRET = b"The vault code is written under the third floorboard."


@pytest.fixture
def owners_source(fake_openai, notebook, add_ready_source):
    return add_ready_source(notebook, SECRET, "vault.txt")


def test_ask_with_another_users_notebook_title_finds_no_notebook(owners_source, outsider):
    with pytest.raises(CommandError, match="outsider has no notebook 'Research'"):
        call_command("ask", "Where is the vault code?", user="outsider", notebook="Research")

    assert not Message.objects.exists()


def test_ask_about_another_users_source_id_is_refused(owners_source, outsider, capsys):
    Notebook.objects.create(owner=outsider, title="Mine")

    with pytest.raises(CommandError, match=f"no source {owners_source.pk}"):
        call_command(
            "ask",
            "Where is the vault code?",
            user="outsider",
            notebook="Mine",
            source=owners_source.pk,
        )

    assert "floorboard" not in capsys.readouterr().out
    assert not Message.objects.exists()


def test_ask_in_the_outsiders_own_notebook_never_cites_the_owners_passages(
    fake_openai, owners_source, outsider, add_ready_source, capsys
):
    fake_openai.chat_replies.append("Floorboards creak [1]; the vault code is elsewhere [2].")
    mine = Notebook.objects.create(owner=outsider, title="Mine")
    add_ready_source(mine, b"Floorboards creak in old houses under every step.", "house.txt")

    call_command(
        "ask",
        "Where is the vault code, under which creaking floorboard?",  # covered enough by hers
        user="outsider",
        notebook="Mine",
        json=True,
    )

    answer = json.loads(capsys.readouterr().out)
    assert answer["citations"], "nothing was cited, so the test proves nothing"
    assert owners_source.pk not in {citation["source_id"] for citation in answer["citations"]}
    assert "third floorboard" not in json.dumps(answer)
    assert "third floorboard" not in json.dumps([r.body for r in fake_openai.chat_requests])


# The command waits for a real worker, which needs the rows committed.
@pytest.mark.django_db(transaction=True)
def test_ingest_with_another_users_notebook_title_makes_a_notebook_of_ones_own(
    owners_source, notebook, outsider, tmp_path, capsys
):
    path = tmp_path / "vault.txt"
    path.write_bytes(SECRET)  # the very bytes of the owner's source

    call_command("ingest", str(path), user="outsider", notebook="Research", json=True)

    result = json.loads(capsys.readouterr().out)
    theirs = Notebook.objects.get(owner=outsider, title="Research")
    assert theirs.pk != notebook.pk
    assert result["source_id"] != owners_source.pk
    assert Source.objects.get(pk=result["source_id"]).owner == outsider
    assert list(NotebookSource.objects.filter(notebook=notebook)) == list(
        NotebookSource.objects.filter(source=owners_source)
    )
    assert NotebookSource.objects.filter(notebook=notebook).count() == 1


def test_generate_with_another_users_notebook_title_finds_no_notebook(owners_source, outsider):
    with pytest.raises(CommandError):
        call_command("generate", user="outsider", notebook="Research", kind="report")

    assert not Notebook.objects.filter(owner=outsider).exists()
