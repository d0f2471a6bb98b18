"""An audio overview's script spoken in two voices and encoded as one MP3."""

from __future__ import annotations

import subprocess

import imageio_ffmpeg
import pytest

from billing.models import Usage
from billing.services import usage_for
from generation.speech import PAUSE_SECONDS, SpokenAudio, synthesize_dialogue
from providers import tts
from providers.errors import ProviderError

SCRIPT_EN = [
    ("A", "Welcome back. Today we look at how the printing press changed Europe."),
    ("B", "It made books cheap, so far more people learned to read."),
    ("A", "And ideas travelled faster than ever before."),
]
SCRIPT_DE = [
    ("A", "Willkommen zurück. Heute geht es um den Buchdruck in Europa."),
    ("B", "Er machte Bücher billig, und viel mehr Menschen lernten lesen."),
]


def decoded_seconds(mp3: bytes, tmp_path) -> float:
    """The MP3's length by decoding every frame with ffmpeg, independent of its header."""
    path = tmp_path / "overview.mp3"
    path.write_bytes(mp3)
    result = subprocess.run(
        [imageio_ffmpeg.get_ffmpeg_exe(), "-v", "error", "-i", str(path)]
        + ["-f", "s16le", "-ac", "1", "-ar", "8000", "pipe:1"],
        capture_output=True,
        check=True,
    )
    assert not result.stderr, result.stderr  # a clean stream: no decoding errors
    return len(result.stdout) / (8000 * 2)


def is_mp3(data: bytes) -> bool:
    return data.startswith(b"ID3") or (data[0] == 0xFF and data[1] & 0xE0 == 0xE0)


def test_a_dialogue_alternates_voices_and_lasts_as_long_as_its_segments(
    fake_openai, owner, notebook, tmp_path
):
    turns = [("A", "one two three"), ("B", "four five"), ("A", "six")]

    with usage_for(notebook_id=notebook.pk):
        audio = synthesize_dialogue(turns, language="en", user=owner)

    assert isinstance(audio, SpokenAudio)
    assert audio.engine == "speech model fake-tts"
    bodies = [request.body for request in fake_openai.speech_requests]
    assert [(body["voice"], body["input"]) for body in bodies] == [
        ("fake-voice-a", "one two three"),
        ("fake-voice-b", "four five"),
        ("fake-voice-a", "six"),
    ]
    # Six words at the server's 0.4 s a word, and two pauses between three turns.
    expected = 6 * 0.4 + 2 * PAUSE_SECONDS
    assert is_mp3(audio.mp3)
    assert audio.seconds == pytest.approx(expected, abs=0.1)
    assert decoded_seconds(audio.mp3, tmp_path) == pytest.approx(audio.seconds, abs=0.06)
    rows = Usage.objects.filter(kind="tts", model="fake-tts").order_by("pk")
    assert [float(row.seconds) for row in rows] == pytest.approx([1.2, 0.8, 0.4], abs=0.001)
    assert {(row.user, row.notebook_id) for row in rows} == {(owner, notebook.pk)}


def test_a_turn_longer_than_one_call_takes_is_split_into_calls(fake_openai, settings, owner):
    settings.TTS_MAX_INPUT_CHARS = 100
    long_turn = " ".join(f"This is sentence number {n} of a long turn." for n in range(12))

    synthesize_dialogue([("A", long_turn), ("B", "Indeed.")], language="en", user=owner)

    inputs = [request.body["input"] for request in fake_openai.speech_requests]
    voices = [request.body["voice"] for request in fake_openai.speech_requests]
    assert len(inputs) > 5
    assert all(len(text) <= 100 for text in inputs)
    assert " ".join(inputs[:-1]).split() == long_turn.split()
    assert voices == ["fake-voice-a"] * (len(inputs) - 1) + ["fake-voice-b"]


def test_a_failing_speech_model_fails_the_dialogue_with_its_reason(fake_openai, owner):
    fake_openai.fail_next("500", times=2, endpoint="audio/speech", skip=1)

    with pytest.raises(ProviderError, match=r"text-to-speech model .* \(HTTP 500\)"):
        synthesize_dialogue(SCRIPT_EN, language="en", user=owner)


@pytest.mark.parametrize(
    ("language", "script", "engine", "model"),
    [
        ("en", SCRIPT_EN, "Piper voice Joe (en_US) (local)", "local/piper-joe"),
        ("de", SCRIPT_DE, "espeak-ng (local)", "local/espeak-ng"),
    ],
)
def test_a_dialogue_is_spoken_offline_as_a_valid_mp3(
    settings, owner, tmp_path, language, script, engine, model
):
    settings.OPENAI_BASE_URL = ""
    settings.TTS_MODEL = ""
    settings.ESPEAK_BINARY = "espeak-ng"

    audio = synthesize_dialogue(script, language=language, user=owner)

    assert audio.engine == engine
    assert is_mp3(audio.mp3)
    words = sum(len(text.split()) for _, text in script)
    # Both voices speak about 150-175 words a minute; allow a wide margin either way.
    assert words / 175 * 60 * 0.6 < audio.seconds < words / 150 * 60 * 1.6
    assert decoded_seconds(audio.mp3, tmp_path) == pytest.approx(audio.seconds, abs=0.06)
    rows = Usage.objects.filter(kind="tts", model=model)
    assert rows.count() == len(script)
    spoken = sum(float(row.seconds) for row in rows)
    assert audio.seconds == pytest.approx(spoken + (len(script) - 1) * PAUSE_SECONDS, abs=0.1)


def test_without_any_speech_engine_nothing_is_called_and_the_error_says_what_to_set(
    fake_openai, settings, owner
):
    settings.TTS_MODEL = ""
    settings.ESPEAK_BINARY = "/nonexistent/espeak-ng"

    with pytest.raises(tts.SpeechUnavailable, match="TTS_MODEL.*install espeak-ng"):
        synthesize_dialogue(SCRIPT_EN, language="en", user=owner)
    assert not fake_openai.speech_requests
    assert not Usage.objects.exists()


def test_a_script_with_another_speaker_is_refused(fake_openai, owner):
    with pytest.raises(ValueError, match="turn 2 has the speaker 'C'"):
        synthesize_dialogue([("A", "Hi."), ("C", "Hello.")], language="en", user=owner)
    assert not fake_openai.speech_requests


def test_a_script_without_words_is_refused(fake_openai, owner):
    with pytest.raises(ValueError, match="no spoken lines"):
        synthesize_dialogue([("A", "  "), ("B", "")], language="en", user=owner)
