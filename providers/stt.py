"""Speech-to-text: a speech model at an API when configured, else the local whisper-base.

Every call writes a usage row of kind "stt", billed by the second of audio.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import openai
from django.conf import settings
from django.contrib.auth.models import User

from billing.services import record_usage
from providers import local_whisper
from providers.errors import ProviderError
from providers.openai_client import client, describe_error, remote_configured, retried
from texts import Text


@dataclass(frozen=True)
class Transcript:
    text: str
    model: str

    @property
    def reader(self) -> Text:
        """How the source info names the reader: "whisper-base (local)" or "speech model …"."""
        if self.model == local_whisper.MODEL_NAME:
            return local_whisper.READER_NAME
        return Text("speech model %(model)s", model=self.model)


def remote_stt_configured() -> bool:
    return remote_configured() and bool(settings.STT_MODEL)


def transcribe(path: Path, *, seconds: float, user: User | None) -> Transcript:
    """The words spoken in an MP3 or WAV file of `seconds` length, in one billed call."""
    if not remote_stt_configured():
        text = local_whisper.transcribe(path, seconds=seconds, user=user)
        return Transcript(text=text, model=local_whisper.MODEL_NAME)
    model = settings.STT_MODEL
    try:
        with path.open("rb") as audio:
            response = retried(
                lambda: client().audio.transcriptions.create(model=model, file=audio)
            )
        if isinstance(response, str):
            # A body that is not JSON (a proxy's error page) comes back as plain text.
            raise ValueError(f"a response that is not JSON: {response[:80]!r}")
        # Billed as soon as the model has answered, before the transcript is checked.
        record_usage(user=user, kind="stt", model=model, seconds=seconds)
        text = response.text
        if not isinstance(text, str):
            raise ValueError(f"a transcript that is not text: {text!r:.80}")
    except (openai.OpenAIError, ValueError, TypeError, AttributeError) as exc:
        raise ProviderError(describe_error("speech-to-text", exc)) from exc
    return Transcript(text=text.strip(), model=model)
