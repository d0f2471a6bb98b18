"""Without STT_MODEL, the local whisper-base transcribes a recording, offline and for free."""

import pytest
from django.core.files.base import ContentFile

from billing.models import Usage
from ingest.services import add_source, process_source
from ingest.tests.recordings import SPEECH_WAV, silent_wav
from providers import local_whisper

pytestmark = [pytest.mark.django_db, pytest.mark.local_models]


def test_the_local_model_transcribes_a_spoken_wav(notebook, settings):
    settings.STT_MODEL = ""
    added = add_source(
        owner=notebook.owner,
        notebook=notebook,
        upload=ContentFile(SPEECH_WAV.read_bytes(), name="talk.wav"),
    )
    source = process_source(source_id=added.source.pk)

    assert source.status == "ready", source.error
    assert source.reader == "whisper-base (local)"
    text = " ".join(chunk.text for chunk in source.chunks.all()).lower()
    assert "hello world" in text
    assert "test recording" in text
    assert "moon" in text
    usage = Usage.objects.get(kind="stt")
    assert usage.model == "local/whisper-base"
    assert 4.4 < usage.seconds < 4.7
    assert usage.cost == 0


def test_the_joined_model_matches_its_checksum():
    folder = local_whisper.ensure_model()

    assert local_whisper._sha256(folder / "model.bin") == local_whisper.MODEL_SHA256


def test_the_local_model_finds_no_speech_in_silence(notebook, settings):
    settings.STT_MODEL = ""
    added = add_source(
        owner=notebook.owner, notebook=notebook, upload=ContentFile(silent_wav(), name="quiet.wav")
    )
    source = process_source(source_id=added.source.pk)

    assert source.status == "failed"
    assert "no speech found" in source.error.lower()
    assert Usage.objects.filter(kind="stt", model="local/whisper-base").count() == 1
