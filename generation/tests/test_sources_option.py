"""`ask --sources ID,ID` and `generate --sources ID,ID`: scripts choose the sources as the
page's ticks do; without the option the person's ticks on the page count."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from generation.documents.models import GeneratedDocument
from generation.tests.studio.conftest import HERONS, TRAINS, reply
from retrieval.chosen_sources import choose_sources


@pytest.fixture
def two(fake_openai, notebook, add_ready_source):
    return add_ready_source(notebook, HERONS, "herons.md"), add_ready_source(
        notebook, TRAINS, "trains.md"
    )


def ask(capsys, *extra: str) -> dict:
    call_command(
        "ask", "When do grey herons wait for the night train?", "--user", "owner",
        "--notebook", "Research", "--json", *extra,
    )  # fmt: skip
    return json.loads(capsys.readouterr().out)


def test_ask_with_sources_searches_and_cites_only_those(capsys, fake_openai, two):
    herons, _trains = two
    fake_openai.chat_replies.append("Herons [1]. More [2]. Trains [3].")

    result = ask(capsys, "--sources", str(herons.pk))

    assert result["source_ids"] == [herons.pk]
    assert result["citations"]
    assert {cited["source_id"] for cited in result["citations"]} == {herons.pk}


def test_ask_without_sources_uses_the_ticks_of_the_page(capsys, fake_openai, owner, notebook, two):
    _herons, trains = two
    choose_sources(user=owner, notebook=notebook, ticked=[trains.pk])
    fake_openai.chat_replies.append("At 20:15 [1].")

    result = ask(capsys)

    assert result["source_ids"] == [trains.pk]
    assert {cited["source_id"] for cited in result["citations"]} == {trains.pk}


@pytest.mark.parametrize("value", ["abc", "1,,x", "999999"])
def test_ask_names_sources_that_are_not_the_notebooks(capsys, fake_openai, two, value):
    with pytest.raises(CommandError, match="--sources|no source 999999"):
        ask(capsys, "--sources", value)


@pytest.mark.django_db(transaction=True)
def test_generate_with_sources_reads_only_those(capsys, fake_openai, owner, notebook, two):
    herons, _trains = two
    fake_openai.chat_replies.append(reply({"title": "R", "markdown": "Herons nest [1]."}))

    call_command(
        "generate", "--user", "owner", "--notebook", "Research", "--kind", "report",
        "--sources", str(herons.pk), "--json",
    )  # fmt: skip

    result = json.loads(capsys.readouterr().out)
    assert result["status"] == "ready" and result["source_ids"] == [herons.pk]
    material = fake_openai.chat_requests[-1].body["messages"][-1]["content"]
    assert "Grey herons" in material
    assert "Night trains" not in material and "Vienna" not in material
    document = GeneratedDocument.objects.get()
    assert {cited.source_id for cited in document.citations.all()} == {herons.pk}


def test_generate_with_nothing_ticked_is_refused(owner, notebook, two):
    choose_sources(user=owner, notebook=notebook, ticked=[])

    with pytest.raises(CommandError, match="No source is ticked"):
        call_command("generate", "--user", "owner", "--notebook", "Research", "--kind", "report")
    assert not GeneratedDocument.objects.exists()
