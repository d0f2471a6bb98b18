"""With STT_MODEL at an API, a recording is transcribed in one call billed by the second."""

from decimal import Decimal

import pytest
from django.core.files.base import ContentFile

from billing.models import Usage
from ingest.services import add_source, process_source
from ingest.tests.recordings import SPEECH_WAV

pytestmark = pytest.mark.django_db


def test_a_wav_is_sent_as_uploaded_and_its_transcript_becomes_the_source(fake_openai, notebook):
    fake_openai.transcription_replies.append("The moon is a test recording.")
    wav = SPEECH_WAV.read_bytes()
    added = add_source(
        owner=notebook.owner, notebook=notebook, upload=ContentFile(wav, name="talk.wav")
    )
    assert added.source.kind == "audio"

    source = process_source(source_id=added.source.pk)

    assert source.status == "ready", source.error
    assert source.reader == "speech model fake-stt"
    assert source.page_count is None
    chunk = source.chunks.get()
    assert chunk.text == "The moon is a test recording."
    assert chunk.page is None
    (request,) = fake_openai.transcription_requests
    assert request.body["model"] == "fake-stt"
    assert request.body["file"]["content"] == wav


def test_the_transcription_writes_a_usage_row_with_seconds_and_cost(fake_openai, notebook):
    fake_openai.transcription_replies.append("The moon is a test recording.")
    added = add_source(
        owner=notebook.owner,
        notebook=notebook,
        upload=ContentFile(SPEECH_WAV.read_bytes(), name="talk.wav"),
    )
    process_source(source_id=added.source.pk)

    usage = Usage.objects.get(kind="stt")
    assert usage.model == "fake-stt"
    assert usage.user == notebook.owner
    assert usage.source_id == added.source.pk
    assert Decimal("4.4") < usage.seconds < Decimal("4.7")
    assert usage.cost == usage.seconds * Decimal("0.001")


def test_a_failing_speech_model_fails_the_source_with_a_message(fake_openai, notebook):
    fake_openai.fail_next("500", times=5)
    added = add_source(
        owner=notebook.owner,
        notebook=notebook,
        upload=ContentFile(SPEECH_WAV.read_bytes(), name="talk.wav"),
    )
    source = process_source(source_id=added.source.pk)

    assert source.status == "failed"
    assert "speech-to-text model" in source.error
    assert "HTTP 500" in source.error


def test_an_answer_that_is_not_json_fails_the_source_unbilled(fake_openai, notebook):
    fake_openai.fail_next("garbage", endpoint="transcriptions")
    added = add_source(
        owner=notebook.owner,
        notebook=notebook,
        upload=ContentFile(SPEECH_WAV.read_bytes(), name="talk.wav"),
    )
    source = process_source(source_id=added.source.pk)

    assert source.status == "failed"
    assert "speech-to-text model" in source.error
    assert not Usage.objects.filter(kind="stt").exists()
