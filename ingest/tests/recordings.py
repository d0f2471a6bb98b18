"""Recordings for the audio tests: a committed spoken WAV (fixtures/speech.txt says how it
was made), silence, and other containers made from it with the packaged ffmpeg."""

from __future__ import annotations

import io
import subprocess
import wave
from pathlib import Path

from ingest.loaders.audio import ffmpeg_exe

SPEECH_WAV = Path(__file__).parent / "fixtures" / "speech.wav"
SPEECH_TEXT = "Hello world. This is a test recording about the moon."


def silent_wav(seconds: float = 2.0, rate: int = 16000) -> bytes:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(b"\x00\x00" * int(seconds * rate))
    return buffer.getvalue()


def converted_speech(tmp_path: Path, suffix: str, *args: str) -> bytes:
    """The spoken WAV in another container (".flac", ".ogg", ".m4a" …)."""
    target = tmp_path / f"speech{suffix}"
    subprocess.run(
        [ffmpeg_exe(), "-loglevel", "error", "-y", "-i", str(SPEECH_WAV), *args, str(target)],
        check=True,
        timeout=60,
    )
    return target.read_bytes()
