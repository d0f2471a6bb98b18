"""An audio overview: the model's two-voice script spoken into an MP3 by
generation/speech.py (the test server's /audio/speech, or espeak-ng offline); a missing
engine fails the document with what to configure."""

import pytest
from django.urls import reverse

from generation.documents.models import GeneratedDocument
from generation.speech import mp3_seconds
from generation.tests.studio.conftest import is_mp3, reply

SCRIPT = {
    "title": "Herons and trains",
    "turns": [
        {"speaker": "A", "text": "Today we talk about grey herons and night trains."},
        {"speaker": "B", "text": "Herons stand about ninety five centimetres tall [1]."},
        {"speaker": "A", "text": "And the night train leaves Vienna at a quarter past eight."},
    ],
}


def test_a_script_from_the_chat_model_is_spoken_by_two_voices_into_an_mp3(
    client, fake_openai, owner, notebook, studio_sources, make_document
):
    fake_openai.chat_replies.append(reply(SCRIPT))

    document = make_document("audio")

    assert document.status == GeneratedDocument.Status.READY, document.error
    voices = [request.body["voice"] for request in fake_openai.speech_requests]
    assert voices == ["fake-voice-a", "fake-voice-b", "fake-voice-a"]
    assert "[1]" not in fake_openai.speech_requests[1].body["input"]  # markers are not read out
    data = document.audio.read()
    assert is_mp3(data)
    words = sum(len(turn["text"].split()) for turn in SCRIPT["turns"]) - 1  # "[1]" is gone
    expected = words * fake_openai.speech_seconds_per_word
    assert expected < document.audio_seconds < expected + 2  # plus the pauses between turns
    assert abs(mp3_seconds(document.audio.path) - document.audio_seconds) < 0.2
    client.force_login(owner)
    response = client.get(reverse("studio:audio", args=[notebook.pk, document.pk]))
    assert response["Content-Type"] == "audio/mpeg"
    assert b"".join(response.streaming_content) == data
    assert response["Content-Disposition"].startswith("inline")  # played in the page
    kept = client.get(reverse("studio:audio", args=[notebook.pk, document.pk]) + "?download")
    assert kept["Content-Disposition"].startswith("attachment")
    assert b"".join(kept.streaming_content) == data
    page = client.get(reverse("studio:document", args=[notebook.pk, document.pk])).content.decode()
    assert "<audio controls" in page and "Herons stand about" in page


@pytest.mark.skipif(
    __import__("shutil").which("espeak-ng") is None, reason="espeak-ng is not installed"
)
def test_without_a_speech_model_an_english_script_is_spoken_by_the_local_english_voice(
    fake_openai, settings, studio_sources, make_document
):
    settings.TTS_MODEL = ""
    fake_openai.chat_replies.append(reply(SCRIPT))

    document = make_document("audio")

    assert document.status == GeneratedDocument.Status.READY, document.error
    assert document.audio_engine.startswith("Piper voice Joe")  # the sources are English
    assert is_mp3(document.audio.read())
    assert document.audio_seconds > 3
    assert not fake_openai.speech_requests


def test_without_a_speech_engine_the_overview_fails_saying_what_to_configure(
    fake_openai, settings, studio_sources, make_document
):
    settings.TTS_MODEL = ""
    settings.ESPEAK_BINARY = "no-such-espeak"
    fake_openai.chat_replies.append(reply(SCRIPT))

    document = make_document("audio")

    assert document.status == GeneratedDocument.Status.FAILED
    assert "no speech engine" in document.error and "TTS_MODEL" in document.error
    assert not document.audio
