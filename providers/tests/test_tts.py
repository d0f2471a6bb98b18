"""Text-to-speech: the speech model at the test server, the local espeak-ng, and neither."""

from __future__ import annotations

import array
from decimal import Decimal

import pytest

from billing.checks import model_prices
from billing.models import Usage
from billing.prices import Price, price_for
from providers import tts
from providers.errors import ProviderError
from providers.tests.fake_openai import tone


def zero_crossings_per_second(speech: tts.Speech) -> float:
    """A rough pitch: how often the waveform crosses zero in a second."""
    samples = array.array("h", speech.pcm)
    crossings = sum(1 for a, b in zip(samples, samples[1:], strict=False) if (a < 0) != (b < 0))
    return crossings / speech.seconds


# The speech model at an API (the test server)


def test_a_remote_call_sends_the_text_the_first_voice_and_asks_for_wav(fake_openai, owner):
    speech = tts.speak("Hello there, reader.", speaker="A", language="en", user=owner)

    [request] = fake_openai.speech_requests
    assert request.body == {
        "model": "fake-tts",
        "voice": "fake-voice-a",
        "input": "Hello there, reader.",
        "response_format": "wav",
    }
    # Three words at the server's 0.4 s a word.
    assert speech.seconds == pytest.approx(1.2, abs=0.01)
    assert (speech.model, speech.voice) == ("fake-tts", "fake-voice-a")


def test_speaker_b_speaks_with_the_second_voice(fake_openai, owner):
    first = tts.speak("One two", speaker="A", language="en", user=owner)
    second = tts.speak("One two", speaker="B", language="en", user=owner)

    assert [r.body["voice"] for r in fake_openai.speech_requests] == [
        "fake-voice-a",
        "fake-voice-b",
    ]
    # The server's tone follows the voice: the two segments really sound different.
    assert first.pcm != second.pcm
    assert abs(zero_crossings_per_second(first) - zero_crossings_per_second(second)) > 20


def test_each_remote_call_writes_a_usage_row_with_its_seconds(fake_openai, owner):
    tts.speak("one two three four five", speaker="A", language="en", user=owner)

    [usage] = Usage.objects.filter(kind="tts")
    assert (usage.user, usage.model) == (owner, "fake-tts")
    assert usage.seconds == Decimal("2.000")
    assert usage.cost == Decimal("2.000") * Decimal("0.002")


def test_an_mp3_answer_is_decoded_like_a_wav_one():
    # Servers that ignore response_format answer with MP3; both decode to the same PCM.
    from_wav = tts.decode_to_pcm(tone(1.5, 440, "wav"))
    from_mp3 = tts.decode_to_pcm(tone(1.5, 440, "mp3"))

    assert len(from_wav) / tts.BYTES_PER_SECOND == pytest.approx(1.5, abs=0.01)
    assert len(from_mp3) / tts.BYTES_PER_SECOND == pytest.approx(1.5, abs=0.1)


def test_a_server_error_is_retried(fake_openai, owner):
    fake_openai.fail_next("500", endpoint="audio/speech")

    speech = tts.speak("Still spoken.", speaker="A", language="en", user=owner)

    assert [r.answered_with for r in fake_openai.speech_requests] == ["500", "ok"]
    assert speech.seconds == pytest.approx(0.8, abs=0.01)
    assert Usage.objects.filter(kind="tts").count() == 1


def test_a_server_that_keeps_failing_gives_a_clear_error(fake_openai, owner):
    fake_openai.fail_next("500", times=2, endpoint="audio/speech")

    with pytest.raises(ProviderError, match=r"text-to-speech model .* error \(HTTP 500\)"):
        tts.speak("Never spoken.", speaker="A", language="en", user=owner)
    assert not Usage.objects.filter(kind="tts").exists()


def test_an_answer_that_is_not_audio_fails_and_is_recorded(fake_openai, owner):
    fake_openai.fail_next("garbage", endpoint="audio/speech")

    with pytest.raises(
        ProviderError, match="text-to-speech model .* cannot use .* cannot be played"
    ):
        tts.speak("Never spoken.", speaker="A", language="en", user=owner)
    [usage] = Usage.objects.filter(kind="tts")
    assert usage.seconds == 0


def test_text_longer_than_one_call_takes_is_refused(fake_openai, settings, owner):
    settings.TTS_MAX_INPUT_CHARS = 100

    with pytest.raises(ValueError, match="TTS_MAX_INPUT_CHARS"):
        tts.speak("word " * 30, speaker="A", language="en", user=owner)
    assert not fake_openai.speech_requests


def test_a_third_speaker_is_refused(fake_openai, owner):
    with pytest.raises(ValueError, match="speaker"):
        tts.speak("Hello", speaker="C", language="en", user=owner)


# Splitting long text


def test_long_text_is_split_after_sentences_within_the_limit():
    text = "One two three. Four five six! Seven eight nine ten eleven twelve."

    pieces = tts.split_text(text, limit=20)

    assert pieces == ["One two three.", "Four five six!", "Seven eight nine ten", "eleven twelve."]


def test_splitting_keeps_every_word_and_respects_the_limit():
    text = " ".join(f"Sentence {n} has a few words in it." for n in range(200))

    pieces = tts.split_text(text, limit=4096)

    assert len(pieces) > 1
    assert all(len(piece) <= 4096 for piece in pieces)
    assert " ".join(pieces).split() == text.split()
    assert all(piece.endswith(".") for piece in pieces)


def test_one_endless_word_is_cut_at_the_limit():
    assert tts.split_text("x" * 45, limit=20) == ["x" * 20, "x" * 20, "x" * 5]


# The local espeak-ng


@pytest.fixture
def local_only(settings):
    settings.OPENAI_BASE_URL = ""
    settings.TTS_MODEL = ""
    settings.ESPEAK_BINARY = "espeak-ng"
    return settings


# English has a neural voice (test_local_voice.py); espeak-ng speaks the other languages.
@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("de", "Guten Morgen. Heute sprechen wir über die Geschichte des Buchdrucks."),
        ("fr", "Bonjour. Aujourd'hui nous parlons de l'histoire de l'imprimerie."),
    ],
)
def test_espeak_speaks_in_two_voices_without_network(local_only, owner, language, text):
    first = tts.speak(text, speaker="A", language=language, user=owner)
    second = tts.speak(text, speaker="B", language=language, user=owner)

    assert (first.voice, second.voice) == (f"{language}+m3", f"{language}+f3")
    # Twelve words or so at espeak-ng's 175 words a minute: about four seconds.
    for speech in (first, second):
        assert 2.0 < speech.seconds < 9.0
    # The female voice is higher: its waveform crosses zero more often.
    assert zero_crossings_per_second(second) > zero_crossings_per_second(first)
    rows = Usage.objects.filter(kind="tts", model="local/espeak-ng")
    assert [row.cost for row in rows] == [0, 0]
    assert sorted(float(row.seconds) for row in rows) == pytest.approx(
        sorted([first.seconds, second.seconds]), abs=0.001
    )


def test_espeak_falls_back_from_a_regional_code_to_the_language(local_only, owner):
    speech = tts.speak("Grüß Gott.", speaker="B", language="de-AT", user=owner)

    assert speech.voice == "de+f3"


def test_a_language_espeak_cannot_speak_fails_naming_it(local_only, owner):
    with pytest.raises(ProviderError, match="no voice for the language 'xx'.*TTS_MODEL"):
        tts.speak("Hello", speaker="A", language="xx", user=owner)


def test_espeak_is_priced_at_zero_like_the_other_local_models():
    assert price_for("local/espeak-ng") == Price()


# Neither engine


def test_without_a_model_or_espeak_the_error_says_what_to_configure(settings, owner):
    settings.TTS_MODEL = ""
    settings.ESPEAK_BINARY = "/nonexistent/espeak-ng"

    with pytest.raises(tts.SpeechUnavailable, match="TTS_MODEL.*install espeak-ng"):
        tts.engine_name()
    with pytest.raises(ProviderError, match="TTS_MODEL.*install espeak-ng"):
        tts.speak("Hello", speaker="A", language="en", user=owner)
    assert not Usage.objects.exists()


def test_the_engine_is_named_for_people(fake_openai, settings):
    assert tts.engine_name() == "speech model fake-tts"
    settings.TTS_MODEL = ""
    assert tts.engine_name("de") == "espeak-ng (local)"
    assert tts.engine_name("en") == "Piper voice Joe (en_US) (local)"


def test_an_unpriced_tts_model_stops_the_start_up_check(fake_openai, settings):
    settings.TTS_MODEL = "unpriced-tts"

    errors = model_prices(None)

    assert [error.id for error in errors] == ["billing.E001"]
    assert "unpriced-tts (TTS_MODEL)" in errors[0].msg


def test_the_start_up_check_warns_when_audio_overviews_cannot_be_spoken(settings):
    from providers.checks import speech_engine

    assert speech_engine(None) == []
    settings.TTS_MODEL = ""
    settings.ESPEAK_BINARY = "/nonexistent/espeak-ng"

    [warning] = speech_engine(None)

    assert warning.id == "providers.W002"
    assert "TTS_MODEL" in warning.msg and "espeak-ng" in warning.msg
