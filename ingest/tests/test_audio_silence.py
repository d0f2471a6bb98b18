"""A recording without speech fails the source, and the transcription is still billed."""

import pytest
from django.core.files.base import ContentFile

from billing.models import Usage
from ingest.services import add_source, process_source
from ingest.tests.recordings import silent_wav

pytestmark = pytest.mark.django_db


def test_silence_fails_no_speech_with_the_usage_row_written(fake_openai, notebook):
    fake_openai.transcription_replies.append("  \n")
    added = add_source(
        owner=notebook.owner, notebook=notebook, upload=ContentFile(silent_wav(), name="quiet.wav")
    )
    source = process_source(source_id=added.source.pk)

    assert source.status == "failed"
    assert "no speech found" in source.error.lower()
    assert "speech model fake-stt" in source.error
    usage = Usage.objects.get(kind="stt")
    assert usage.seconds == 2
    assert usage.cost > 0
