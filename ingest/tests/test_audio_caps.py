"""Recordings beyond a cap, or that cannot be decoded, fail with a message naming why."""

import pytest

from ingest.loaders.audio import prepare
from ingest.passages import LoaderError
from ingest.tests.recordings import SPEECH_WAV


@pytest.fixture
def wav(tmp_path):
    path = tmp_path / "talk.wav"
    path.write_bytes(SPEECH_WAV.read_bytes())
    return path


def test_a_recording_over_audio_max_bytes_fails_naming_the_cap(settings, wav):
    settings.AUDIO_MAX_BYTES = 1000

    with pytest.raises(LoaderError, match="AUDIO_MAX_BYTES"):
        prepare(wav)


def test_a_recording_over_audio_max_seconds_fails_naming_the_cap(settings, wav):
    settings.AUDIO_MAX_SECONDS = 2

    with pytest.raises(LoaderError, match=r"lasts 0:00:05.*AUDIO_MAX_SECONDS"):
        prepare(wav)


def test_a_recording_too_large_even_as_mp3_fails_naming_the_cap(settings, wav):
    settings.AUDIO_TRANSCRIBED_MAX_BYTES = 2000

    with pytest.raises(LoaderError, match="AUDIO_TRANSCRIBED_MAX_BYTES"):
        prepare(wav)


def test_a_damaged_recording_fails_with_a_readable_message(tmp_path):
    broken = tmp_path / "broken.ogg"
    broken.write_bytes(b"OggS" + b"\x00garbage" * 100)

    with pytest.raises(LoaderError, match="could not be read as a recording"):
        prepare(broken)


def test_a_conversion_that_runs_too_long_fails_naming_the_timeout(settings, tmp_path):
    settings.AUDIO_CONVERT_TIMEOUT_SECONDS = 0.0001
    flac = tmp_path / "talk.flac"
    flac.write_bytes(SPEECH_WAV.read_bytes())

    with pytest.raises(LoaderError, match="AUDIO_CONVERT_TIMEOUT_SECONDS"):
        prepare(flac)
