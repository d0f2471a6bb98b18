"""Audio overviews in three formats (deep dive, brief, debate) and three lengths, offline from
a real manual's sections and with a model, from the studio form and `manage.py generate`."""

from __future__ import annotations

import json
import re

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from generation.documents.inputs import gather
from generation.documents.kinds import audio
from generation.documents.models import GeneratedDocument
from generation.tests.studio.conftest import reply
from ingest.tests.data import MANUAL, outline_chapters


@pytest.fixture
def manual(fake_openai, settings, notebook, add_ready_source):
    settings.CHAT_MODEL = ""  # offline
    return add_ready_source(notebook, MANUAL.read_bytes(), MANUAL.name)


def script(owner, notebook, audio_format, length="default"):
    inputs = gather(notebook=notebook, user=owner, focus=audio.FOCUS)
    return audio.extractive(
        inputs, notebook_title=notebook.title, audio_format=audio_format, length=length
    )


def words(data):
    return sum(len(turn["text"].split()) for turn in data["turns"])


def speakers(data):
    return [turn["speaker"] for turn in data["turns"]]


def test_offline_a_deep_dive_walks_two_hosts_through_the_manuals_chapters(manual, make_document):
    document = make_document("audio")

    assert document.status == GeneratedDocument.Status.READY, document.error
    assert document.audio_format == "deep_dive" and document.length == "default"
    turns = document.data["turns"]
    assert len(turns) >= 12
    said = speakers(document.data)
    assert set(said) == {"A", "B"}
    assert all(first != second for first, second in zip(said, said[1:], strict=False))
    # The walk names the manual's own chapters, in their order.
    chapters = [re.sub(r"^\d+\s*", "", title) for title in outline_chapters()]
    named = [chapter for chapter in chapters if any(f"“{chapter}”" in t["text"] for t in turns)]
    assert len(named) >= 6
    assert named == [chapter for chapter in chapters if chapter in named]
    for turn in turns:  # nothing unspeakable read out
        sentences = re.sub(r"“[^”]*”", "", turn["text"])  # a chapter's title may say "GNU/Linux"
        assert not re.search(r"[/\\$={}<>|_#@`]", sentences), turn["text"]
    assert 400 <= words(document.data) <= 1400


def test_offline_a_brief_is_one_voice_of_about_two_minutes(manual, owner, notebook):
    data = script(owner, notebook, "brief")

    assert set(speakers(data)) == {"A"}
    assert 200 <= words(data) <= 450  # about 150 words a minute
    assert data["title"].startswith("Audio brief")


def test_offline_a_debate_answers_each_point_with_a_caveat_of_the_same_part(
    manual, owner, notebook
):
    data = script(owner, notebook, "debate")

    said = speakers(data)
    assert all(first != second for first, second in zip(said, said[1:], strict=False))
    answers = [turn["text"] for turn in data["turns"][2:-1] if turn["speaker"] == "B"]
    assert len(answers) >= 4
    assert all(audio.CAVEAT_RE.search(text) for text in answers)


def test_offline_the_length_sets_how_long_the_script_runs(manual, owner, notebook):
    lengths = [words(script(owner, notebook, "deep_dive", length)) for length in audio.LENGTHS]

    assert lengths == sorted(lengths) and lengths[0] < lengths[-1] / 1.8


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


def test_offline_a_heading_the_pdf_ran_into_a_sentence_is_cut_off_and_asides_passed_over():
    heading = "1.5 The simple shell command"
    ran_in = "1.5 The simple shell command Now you have some feel on how to use it."
    assert audio._without_heading(ran_in, [heading]) == "Now you have some feel on how to use it."
    assert audio._without_heading("Anmerkung Bestimmte Rechte gelten.", []) == (
        "Bestimmte Rechte gelten."
    )
    assert not audio._speakable("Es gibt viele Werkzeuge für XML-Dateien, wie z.B.")
    assert not audio._speakable("See Section 4.5.2 for integration of server systems.")
    assert not audio._speakable("Edit /etc/apt/sources.list as root.")
    assert audio._speakable("Directories on Unix systems are called folders elsewhere.")
