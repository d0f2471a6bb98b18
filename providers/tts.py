"""Text-to-speech: a speech model at an API when configured; else, on this machine, the
neural Piper voice for English (providers/local_voice.py) and espeak-ng for every other
language (or where the voice package is missing).

Every call writes a usage row of kind "tts", billed by the second of audio it produced.
Whatever an engine returns (the API's WAV, or MP3 from a server that ignores the format
asked for; espeak-ng's WAV) is decoded by the ffmpeg that imageio-ffmpeg ships into one PCM
format (mono, 16 bit, SAMPLE_RATE), so segments of either engine join without re-sampling
and the seconds billed are the seconds heard.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import openai
from django.conf import settings
from django.contrib.auth.models import User

from billing.services import record_usage
from providers import local_voice
from providers.errors import ProviderError
from providers.openai_client import client, describe_error, remote_configured, retried
from texts import Text

SAMPLE_RATE = 24_000
BYTES_PER_SECOND = SAMPLE_RATE * 2  # mono, 16 bit
SPEAKERS = ("A", "B")
LOCAL_MODEL_NAME = "local/espeak-ng"
LOCAL_ENGINE_NAME = Text("%(model)s (local)", model="espeak-ng")
# espeak-ng's voice variants for speakers A and B: a male and a female voice, which sound
# clearly different in every language espeak-ng speaks.
ESPEAK_VARIANTS = ("m3", "f3")
# ISO 639-1 codes that espeak-ng knows under another name.
ESPEAK_ALIASES = {"zh": "cmn", "no": "nb"}
LOCAL_TIMEOUT_SECONDS = 300.0
# A segment shorter than this is no speech at all (an empty or broken answer).
MIN_SECONDS = 0.05
SENTENCE_END_RE = re.compile(r"[.!?…。！？][\"'”’»)\]]*\s+")
WHITESPACE_RE = re.compile(r"\s+")


def not_available(binary: str) -> Text:
    return Text(
        "Loupe has no speech engine for audio overviews: set OPENAI_BASE_URL and TTS_MODEL "
        "(and TTS_VOICES) to use a speech model at an API, or install espeak-ng "
        "(Debian/Ubuntu: apt-get install espeak-ng; ESPEAK_BINARY=%(binary)s was not found).",
        binary=repr(binary),
    )


class SpeechUnavailable(ProviderError):
    """Neither a remote speech model nor the local espeak-ng is available."""


@dataclass(frozen=True)
class Speech:
    pcm: bytes  # mono 16-bit little-endian samples at SAMPLE_RATE
    model: str
    voice: str

    @property
    def seconds(self) -> float:
        return len(self.pcm) / BYTES_PER_SECOND


def remote_tts_configured() -> bool:
    return remote_configured() and bool(settings.TTS_MODEL)


def espeak_path() -> str | None:
    """The espeak-ng executable ESPEAK_BINARY names (on PATH or as a path), if it exists."""
    return shutil.which(settings.ESPEAK_BINARY)


def engine_name(language: str = "") -> Text:
    """The engine that would speak `language` now, as people read it; SpeechUnavailable
    when none."""
    if remote_tts_configured():
        return Text("speech model %(model)s", model=settings.TTS_MODEL)
    if espeak_path():
        if local_voice.speaks(language):
            return Text("%(model)s (local)", model=local_voice.VOICE_NAME)
        return LOCAL_ENGINE_NAME
    raise SpeechUnavailable(not_available(settings.ESPEAK_BINARY))


def split_text(text: str, *, limit: int) -> list[str]:
    """The text in pieces of at most `limit` characters, cut after a sentence where one
    ends in the piece, else at a space, else (one endless word) at the limit."""
    pieces = []
    rest = WHITESPACE_RE.sub(" ", text).strip()
    while len(rest) > limit:
        window = rest[: limit + 1]  # a space right after the limit is a clean cut too
        ends = [match.end() for match in SENTENCE_END_RE.finditer(window)]
        spaces = [match.start() for match in WHITESPACE_RE.finditer(window)]
        cut = ends[-1] if ends else spaces[-1] if spaces and spaces[-1] > 0 else limit
        pieces.append(rest[:cut].strip())
        rest = rest[cut:].strip()
    if rest:
        pieces.append(rest)
    return pieces


def speak(text: str, *, speaker: str, language: str, user: User | None) -> Speech:
    """One piece of text (at most TTS_MAX_INPUT_CHARS) in speaker A's or B's voice."""
    if speaker not in SPEAKERS:
        raise ValueError(f"speaker must be one of {SPEAKERS}, got {speaker!r}")
    text = text.strip()
    if not text:
        raise ValueError("there is no text to speak")
    if len(text) > settings.TTS_MAX_INPUT_CHARS:
        raise ValueError(
            f"{len(text)} characters are more than one speech call takes "
            f"({settings.TTS_MAX_INPUT_CHARS}, TTS_MAX_INPUT_CHARS); split_text() them first"
        )
    index = SPEAKERS.index(speaker)
    if remote_tts_configured():
        return _speak_remote(text, voice=settings.TTS_VOICES[index], user=user)
    binary = espeak_path()
    if binary is None:
        raise SpeechUnavailable(not_available(settings.ESPEAK_BINARY))
    if local_voice.speaks(language):
        return _speak_neural(text, binary=binary, speaker=speaker, user=user)
    return _speak_local(
        text, binary=binary, variant=ESPEAK_VARIANTS[index], language=language, user=user
    )


def _speak_remote(text: str, *, voice: str, user: User | None) -> Speech:
    model = settings.TTS_MODEL
    try:
        # WAV, so nothing is lost to a second lossy encoding when the segments are joined.
        response = retried(
            lambda: client().audio.speech.create(
                model=model, voice=voice, input=text, response_format="wav"
            )
        )
        audio = response.content
    except openai.OpenAIError as exc:
        raise ProviderError(describe_error("text-to-speech", exc)) from exc
    try:
        pcm = decode_to_pcm(audio)
    except ProviderError as exc:
        # The call was made (and may be billed); its length is unknown, so 0 seconds.
        record_usage(user=user, kind="tts", model=model, seconds=0)
        raise ProviderError(
            describe_error("text-to-speech", ValueError(f"audio that cannot be played: {exc}"))
        ) from exc
    speech = Speech(pcm=pcm, model=model, voice=voice)
    record_usage(user=user, kind="tts", model=model, seconds=round(speech.seconds, 3))
    if speech.seconds < MIN_SECONDS:
        raise ProviderError(
            describe_error("text-to-speech", ValueError(f"no audio for {len(text)} characters"))
        )
    return speech


def espeak_languages(language: str) -> list[str]:
    """The espeak-ng language names to try for an ISO code: as given, then without region."""
    code = (language or "en").strip().lower().replace("_", "-")
    base = code.split("-")[0]
    names = [code, ESPEAK_ALIASES.get(code, code), base, ESPEAK_ALIASES.get(base, base)]
    return list(dict.fromkeys(name for name in names if name))


@lru_cache(maxsize=4)
def espeak_voice_files(binary: str) -> frozenset[str]:
    """The names `-v` accepts with a variant: the voice files' names ("en", "de", "en-us").

    espeak-ng takes an unknown name such as "de-at" without complaint but then ignores the
    "+variant", so both speakers would sound the same; only listed names are used.
    """
    try:
        listing = subprocess.run(
            [binary, "--voices"], capture_output=True, timeout=30, check=True
        ).stdout.decode(errors="replace")
    except (OSError, subprocess.SubprocessError) as exc:
        raise SpeechUnavailable(not_available(binary)) from exc
    names = set()
    for line in listing.splitlines()[1:]:
        columns = line.split()
        # Pty, Language, Age/Gender, VoiceName, File[, Other Languages]; mbrola voices ("mb/")
        # need separately installed data and take no variants.
        if len(columns) >= 5 and not columns[4].startswith(("mb/", "!v/")):
            names.add(columns[4].rsplit("/", 1)[-1].lower())
    return frozenset(names)


def espeak_voice(binary: str, language: str, variant: str) -> str:
    available = espeak_voice_files(binary)
    for name in espeak_languages(language):
        if name in available:
            return f"{name}+{variant}"
    raise ProviderError(
        Text(
            "espeak-ng has no voice for the language %(language)s. Set OPENAI_BASE_URL and "
            "TTS_MODEL to use a speech model at an API, or choose another language.",
            language=repr(language),
        )
    )


def _speak_local(
    text: str, *, binary: str, variant: str, language: str, user: User | None
) -> Speech:
    voice = espeak_voice(binary, language, variant)
    with tempfile.TemporaryDirectory(prefix="loupe-tts-") as folder:
        target = Path(folder) / "speech.wav"
        try:
            # The text goes in on stdin, never as an argument espeak-ng could take for an
            # option; -b 1: it is UTF-8.
            result = subprocess.run(
                [binary, "-v", voice, "-b", "1", "-w", str(target), "--stdin"],
                input=text.encode(),
                capture_output=True,
                timeout=LOCAL_TIMEOUT_SECONDS,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise ProviderError(
                f"espeak-ng took longer than {LOCAL_TIMEOUT_SECONDS:.0f} seconds for "
                f"{len(text)} characters."
            ) from exc
        except OSError as exc:
            raise SpeechUnavailable(not_available(binary)) from exc
        if result.returncode != 0 or not target.exists():
            message = result.stderr.decode(errors="replace").strip()[:300] or "no message"
            raise ProviderError(f"espeak-ng failed with the voice {voice} ({message}).")
        speech = Speech(pcm=decode_to_pcm(target.read_bytes()), model=LOCAL_MODEL_NAME, voice=voice)
    # Metered like every model call, at no cost: the admin sees what was spoken.
    record_usage(user=user, kind="tts", model=LOCAL_MODEL_NAME, seconds=round(speech.seconds, 3))
    return speech


def _speak_neural(text: str, *, binary: str, speaker: str, user: User | None) -> Speech:
    pcm = local_voice.speak(
        text, speaker=speaker, binary=binary, run_ffmpeg=run_ffmpeg, rate=SAMPLE_RATE
    )
    speech = Speech(pcm=pcm, model=local_voice.MODEL_NAME, voice=f"joe-{speaker}")
    if speech.seconds < MIN_SECONDS:
        raise ProviderError(f"The local voice gave no audio for {len(text)} characters.")
    # Metered like every model call, at no cost.
    record_usage(
        user=user, kind="tts", model=local_voice.MODEL_NAME, seconds=round(speech.seconds, 3)
    )
    return speech


def ffmpeg_exe() -> str:
    try:
        import imageio_ffmpeg
    except ImportError as exc:
        raise ProviderError(
            "Loupe cannot make audio: the imageio-ffmpeg package is not installed "
            "(requirements.txt)."
        ) from exc
    return imageio_ffmpeg.get_ffmpeg_exe()


def run_ffmpeg(*args: str, data: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    """ffmpeg with `args`, `data` on its stdin; the caller checks the return code."""
    try:
        return subprocess.run(
            [ffmpeg_exe(), "-hide_banner", "-loglevel", "error", *args],
            input=data,
            stdin=None if data is not None else subprocess.DEVNULL,
            capture_output=True,
            timeout=settings.AUDIO_CONVERT_TIMEOUT_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise ProviderError(
            f"ffmpeg took longer than {settings.AUDIO_CONVERT_TIMEOUT_SECONDS:.0f} seconds "
            "(AUDIO_CONVERT_TIMEOUT_SECONDS)."
        ) from exc


def ffmpeg_message(stderr: bytes) -> str:
    """The last lines ffmpeg wrote, which name what went wrong."""
    lines = [line for line in stderr.decode(errors="replace").splitlines() if line.strip()]
    return " ".join(lines[-2:])[:300] or "no message"


def decode_to_pcm(audio: bytes) -> bytes:
    """Any audio ffmpeg reads (WAV, MP3, …) as mono 16-bit PCM at SAMPLE_RATE."""
    if not audio:
        raise ProviderError("the audio is empty")
    result = run_ffmpeg(
        "-i",
        "pipe:0",
        "-vn",
        "-ac",
        "1",
        "-ar",
        str(SAMPLE_RATE),
        "-f",
        "s16le",
        "pipe:1",
        data=audio,
    )
    if result.returncode != 0:
        raise ProviderError(f"ffmpeg could not decode it ({ffmpeg_message(result.stderr)})")
    return result.stdout
