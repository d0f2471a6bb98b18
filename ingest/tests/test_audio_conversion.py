"""Formats other than MP3 and WAV, and WAV beyond the transcription cap, are converted to
mono 16 kHz MP3 beside the original, which is kept."""

from pathlib import Path

import pytest
from django.core.files.base import ContentFile

from ingest.loaders.audio import container, converted_path, duration_seconds, ffmpeg_exe, prepare
from ingest.services import add_source, process_source
from ingest.tests.recordings import SPEECH_WAV, converted_speech

pytestmark = pytest.mark.django_db


def describe(path: Path) -> str:
    import subprocess

    result = subprocess.run([ffmpeg_exe(), "-hide_banner", "-i", str(path)], capture_output=True)
    return result.stderr.decode()


@pytest.mark.parametrize(
    "suffix, args",
    [
        (".flac", ()),
        (".ogg", ("-c:a", "libopus")),
        (".m4a", ("-c:a", "aac")),
        (".aac", ("-c:a", "aac", "-f", "adts")),
        (".webm", ("-c:a", "libopus")),
    ],
    ids=["flac", "ogg-opus", "m4a", "aac", "webm"],
)
def test_a_recording_in_another_format_is_converted_to_mp3_beside_it(
    fake_openai, notebook, tmp_path, suffix, args
):
    fake_openai.transcription_replies.append("The moon is a test recording.")
    data = converted_speech(tmp_path, suffix, *args)
    added = add_source(
        owner=notebook.owner, notebook=notebook, upload=ContentFile(data, name=f"talk{suffix}")
    )
    source = process_source(source_id=added.source.pk)

    assert source.status == "ready", source.error
    original = Path(source.file.path)
    mp3 = converted_path(original)
    assert original.read_bytes() == data
    assert mp3.parent == original.parent
    assert container(mp3.read_bytes()[:64]) == "mp3"
    info = describe(mp3)
    assert "16000 Hz, mono" in info
    (request,) = fake_openai.transcription_requests
    assert request.body["file"]["content"] == mp3.read_bytes()
    assert abs(duration_seconds(mp3) - duration_seconds(SPEECH_WAV)) < 0.3


def test_a_wav_over_the_transcription_cap_is_converted(settings, tmp_path):
    wav = tmp_path / "long.wav"
    wav.write_bytes(SPEECH_WAV.read_bytes())
    settings.AUDIO_TRANSCRIBED_MAX_BYTES = 100_000  # the WAV is 146 kB, its MP3 about 27 kB

    prepared = prepare(wav)

    assert prepared.path == converted_path(wav)
    assert wav.exists()


def test_a_small_wav_is_sent_as_uploaded(tmp_path):
    wav = tmp_path / "short.wav"
    wav.write_bytes(SPEECH_WAV.read_bytes())

    prepared = prepare(wav)

    assert prepared.path == wav
    assert not converted_path(wav).exists()
    assert 4.4 < prepared.seconds < 4.7
