"""Audio overviews in three formats (deep dive, brief, debate) and three lengths, written by
the model, from the studio form and `manage.py generate`."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from generation.documents.kinds import audio
from generation.documents.models import GeneratedDocument
from generation.tests.studio.conftest import reply


def speakers(data):
    return [turn["speaker"] for turn in data["turns"]]


SCRIPT = {
    "title": "Herons and trains",
    "turns": [
        {"speaker": "A", "text": "Today: grey herons and night trains."},
        {"speaker": "B", "text": "Herons stand about ninety five centimetres tall."},
        {"speaker": "B", "text": "They breed in colonies called heronries."},
        {"speaker": "A", "text": "And the night train leaves Vienna at a quarter past eight."},
    ],
}


ONE_VOICE = {"title": "Brief", "turns": [{"speaker": "A", "text": "Herons nest in trees."}]}


@pytest.mark.parametrize(
    ("audio_format", "length", "words"),
    [("deep_dive", "default", "about 800 words"), ("debate", "long", "about 1300 words")],
)
def test_with_a_model_the_prompt_asks_for_the_format_and_length(
    fake_openai, owner, notebook, studio_sources, audio_format, length, words
):
    from generation.documents.services import generate_document, request_document

    fake_openai.chat_replies.append(reply(SCRIPT))
    document = request_document(
        user=owner, notebook=notebook, kind="audio", audio_format=audio_format, length=length
    )
    generate_document(document_id=document.pk)
    document.refresh_from_db()

    assert document.status == GeneratedDocument.Status.READY, document.error
    [request] = fake_openai.chat_requests
    system = request.body["messages"][0]["content"]
    assert words in system and "never the same host twice in a row" in system
    assert ("take sides" in system) == (audio_format == "debate")
    assert request.body["max_tokens"] == audio.output_tokens(audio_format, length)
    # The host who spoke twice in a row speaks once, both lines.
    assert speakers(document.data) == ["A", "B", "A"]
    assert "centimetres tall. They breed" in document.data["turns"][1]["text"]


def test_with_a_model_a_brief_is_asked_of_one_voice(
    client, fake_openai, owner, notebook, studio_sources
):
    from generation.documents.services import generate_document, request_document

    fake_openai.chat_replies.append(reply(ONE_VOICE))
    document = request_document(
        user=owner, notebook=notebook, kind="audio", audio_format="brief", length="short"
    )
    generate_document(document_id=document.pk)
    document.refresh_from_db()

    assert document.status == GeneratedDocument.Status.READY, document.error
    [request] = fake_openai.chat_requests
    schema = request.body["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["turns"]["items"]["properties"]["speaker"] == {"enum": ["A"]}
    assert "one voice" in request.body["messages"][0]["content"]
    assert [r.body["voice"] for r in fake_openai.speech_requests] == ["fake-voice-a"]
    client.force_login(owner)
    page = client.get(reverse("studio:document", args=[notebook.pk, document.pk])).content.decode()
    assert "Brief: one voice, about two minutes · Short" in page


def test_the_studio_form_sends_the_format_and_length_for_an_overview_only(
    client, fake_openai, owner, notebook, studio_sources
):
    client.force_login(owner)
    url = reverse("studio:create", args=[notebook.pk])
    page = client.get(reverse("notebooks:detail", args=[notebook.pk])).content.decode()
    assert 'name="audio_format"' in page and 'name="length"' in page

    client.post(url, {"kind": "audio", "audio_format": "debate", "length": "long"})
    client.post(url, {"kind": "report", "audio_format": "debate", "length": "long"})

    overview, report = GeneratedDocument.objects.order_by("pk")
    assert (overview.audio_format, overview.length) == ("debate", "long")
    assert (report.audio_format, report.length) == ("deep_dive", "default")


@pytest.mark.django_db(transaction=True)
def test_generate_takes_a_format_and_a_length(fake_openai, capsys, owner, notebook, studio_sources):
    fake_openai.chat_replies.append(reply(ONE_VOICE))

    call_command(
        "generate",
        *("--user", "owner", "--notebook", "Research", "--kind", "audio"),
        *("--format", "brief", "--length", "short", "--json"),
    )

    result = json.loads(capsys.readouterr().out)
    assert (result["format"], result["length"]) == ("brief", "short")
    with pytest.raises(CommandError, match="for audio overviews only"):
        call_command(
            "generate",
            *("--user", "owner", "--notebook", "Research", "--kind", "report"),
            *("--format", "debate"),
        )
