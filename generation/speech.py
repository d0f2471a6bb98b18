"""An audio overview's script spoken by two voices, as one MP3.

Each turn is spoken by providers.tts (turns longer than one speech call takes are split at
sentence ends), the segments are joined with a short pause as PCM, and the whole is encoded
once to MP3 by the ffmpeg of imageio-ffmpeg. Encoding to a file rather than a pipe lets the
encoder write the MP3's length into its first frame, so players and `seconds` agree.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import User

from providers import tts
from providers.errors import ProviderError
from texts import Text

# A breath between turns; shorter sounds like interrupting, longer like a dropped line.
PAUSE_SECONDS = 0.35
MP3_BITRATE = "64k"  # mono speech at 24 kHz: clear, about 0.5 MB a minute
DURATION_RE = re.compile(rb"Duration: (\d+):(\d\d):(\d\d(?:\.\d+)?)")


@dataclass(frozen=True)
class SpokenAudio:
    mp3: bytes
    seconds: float
    engine: Text  # "speech model <name>" or "espeak-ng (local)"


def synthesize_dialogue(
    turns: list[tuple[str, str]],
    *,
    language: str,
    user: User | None,
    before_each: Callable[[], None] | None = None,
) -> SpokenAudio:
    """The turns (speaker "A" or "B", text) spoken in two voices, in order, as one MP3;
    `before_each` is called before each speech call (a deadline's check raises there).

    Raises tts.SpeechUnavailable (a ProviderError) before any call when no engine is
    configured or installed, ProviderError when a call fails, ValueError for a script
    that names another speaker or says nothing.
    """
    lines = _checked(turns)
    engine = tts.engine_name(language)
    pause = bytes(round(PAUSE_SECONDS * tts.SAMPLE_RATE) * 2)
    with tempfile.TemporaryDirectory(prefix="loupe-speech-") as folder:
        pcm_path = Path(folder) / "dialogue.pcm"
        # Segments go to disk as they come: an hour of PCM would be 170 MB in memory.
        with pcm_path.open("wb") as pcm:
            first = True
            for speaker, text in lines:
                for piece in tts.split_text(text, limit=settings.TTS_MAX_INPUT_CHARS):
                    if not first:
                        pcm.write(pause)
                    first = False
                    if before_each is not None:
                        before_each()
                    speech = tts.speak(piece, speaker=speaker, language=language, user=user)
                    pcm.write(speech.pcm)
        mp3_path = Path(folder) / "dialogue.mp3"
        _encode_mp3(pcm_path, mp3_path)
        return SpokenAudio(mp3=mp3_path.read_bytes(), seconds=mp3_seconds(mp3_path), engine=engine)


def _checked(turns: list[tuple[str, str]]) -> list[tuple[str, str]]:
    lines = []
    for number, turn in enumerate(turns, start=1):
        try:
            speaker, text = turn
        except (TypeError, ValueError) as exc:
            raise ValueError(f"turn {number} is not a pair (speaker, text): {turn!r:.80}") from exc
        if speaker not in tts.SPEAKERS:
            raise ValueError(
                f"turn {number} has the speaker {speaker!r}; a dialogue has speakers A and B"
            )
        if isinstance(text, str) and text.strip():
            lines.append((speaker, text))
    if not lines:
        raise ValueError("the script has no spoken lines")
    return lines


def _encode_mp3(pcm_path: Path, mp3_path: Path) -> None:
    result = tts.run_ffmpeg(
        "-f", "s16le", "-ar", str(tts.SAMPLE_RATE), "-ac", "1", "-i", str(pcm_path),
        "-c:a", "libmp3lame", "-b:a", MP3_BITRATE, "-f", "mp3", "-y", str(mp3_path),
    )  # fmt: skip
    if result.returncode != 0 or not mp3_path.exists():
        raise ProviderError(
            f"The audio overview could not be encoded as MP3 ({tts.ffmpeg_message(result.stderr)})."
        )


def mp3_seconds(path: Path) -> float:
    """The length of an MP3 as ffmpeg reads it from the file."""
    # Without an output file ffmpeg describes its input, exits with 1 and says "Duration".
    probe = tts.run_ffmpeg("-loglevel", "info", "-i", str(path))
    match = DURATION_RE.search(probe.stderr)
    if not match:
        raise ProviderError(
            f"The audio overview's MP3 has no readable length ({tts.ffmpeg_message(probe.stderr)})."
        )
    hours, minutes, seconds = match.groups()
    return int(hours) * 3600 + int(minutes) * 60 + float(seconds)
