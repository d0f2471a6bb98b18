"""Recordings (MP3, WAV, M4A/MP4, AAC, Ogg/Opus, FLAC, WebM): one speech-to-text call, one
passage without a page.

MP3 and WAV within the transcription cap are sent as uploaded. Everything else, and a longer
WAV, is converted first to mono 16 kHz MP3 by the ffmpeg binary that the imageio-ffmpeg
package ships; the MP3 is stored beside the original, which stays for download.
Transcription is billed per second, so converting does not change the cost.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import User

from ingest.passages import LoaderError, Passage
from providers import stt
from texts import Text
from texts.errors import without_server_paths

MIB = 1024 * 1024
SENT_AS_UPLOADED = {"mp3", "wav"}
# Mono 16 kHz is what speech models listen at; MP3 at this rate takes 8 to 64 kbit/s.
# The highest rate whose file fits the transcription cap is used.
BITRATES_KBIT = (48, 32, 24, 16, 8)
DURATION_RE = re.compile(rb"Duration: (\d+):(\d\d):(\d\d(?:\.\d+)?)")
DECODED_TIME_RE = re.compile(rb"time=(\d+):(\d\d):(\d\d(?:\.\d+)?)")
# Brands of the ISO base media format (the "ftyp" box) that are still images, not recordings.
IMAGE_BRANDS = {b"heic", b"heix", b"heim", b"heis", b"hevc", b"mif1", b"msf1", b"avif", b"avis"}


def container(head: bytes) -> str | None:
    """The audio container of a file by its first bytes, or None when it is not audio."""
    if head.startswith(b"ID3"):
        return "mp3"
    if head[:4] == b"RIFF" and head[8:12] == b"WAVE":
        return "wav"
    if head[4:8] == b"ftyp" and head[8:12] not in IMAGE_BRANDS:
        return "mp4"
    if head.startswith(b"OggS"):
        return "ogg"
    if head.startswith(b"fLaC"):
        return "flac"
    if head.startswith(b"\x1a\x45\xdf\xa3"):
        return "webm"
    if len(head) >= 2 and head[0] == 0xFF and head[1] & 0xE0 == 0xE0:
        layer = (head[1] >> 1) & 0b11
        version = (head[1] >> 3) & 0b11
        if layer == 0 and head[1] & 0xF0 == 0xF0:
            return "aac"  # ADTS: twelve sync bits, then layer 00
        if layer != 0 and version != 0b01:  # a frame header of MPEG audio, layers I–III
            return "mp3"
    return None


def is_audio(head: bytes) -> bool:
    return container(head) is not None


def ffmpeg_exe() -> str:
    try:
        import imageio_ffmpeg
    except ImportError as exc:
        raise LoaderError(
            Text(
                "Loupe cannot convert recordings: the imageio-ffmpeg package is not installed "
                "(requirements.txt)."
            )
        ) from exc
    return imageio_ffmpeg.get_ffmpeg_exe()


def _ffmpeg(*args: str) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(
            [ffmpeg_exe(), "-hide_banner", "-nostdin", *args],
            capture_output=True,
            timeout=settings.AUDIO_CONVERT_TIMEOUT_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise LoaderError(
            Text(
                "Reading this recording took longer than %(max)s seconds "
                "(AUDIO_CONVERT_TIMEOUT_SECONDS).",
                max=f"{settings.AUDIO_CONVERT_TIMEOUT_SECONDS:.0f}",
            )
        ) from exc


def _ffmpeg_error(stderr: bytes) -> str:
    """The last lines ffmpeg wrote, which name what went wrong."""
    lines = [line for line in stderr.decode(errors="replace").splitlines() if line.strip()]
    # ffmpeg names its input by its path on the server.
    return without_server_paths(" ".join(lines[-2:]))[:300] or "no message"


def _seconds(match: re.Match[bytes]) -> float:
    hours, minutes, seconds = match.groups()
    return int(hours) * 3600 + int(minutes) * 60 + float(seconds)


def duration_seconds(path: Path) -> float:
    """The length of a recording; decoded in full when its header does not say."""
    probe = _ffmpeg("-i", str(path))  # no output file: ffmpeg describes the input and stops
    match = DURATION_RE.search(probe.stderr)
    if match:
        return _seconds(match)
    if b"Audio:" not in probe.stderr:
        raise LoaderError(
            Text(
                "This file could not be read as a recording (%(error)s). Is it damaged?",
                error=_ffmpeg_error(probe.stderr),
            )
        )
    # Recordings streamed from a browser (WebM) often carry no duration: decode to count it.
    decoded = _ffmpeg("-i", str(path), "-vn", "-f", "null", "-")
    times = list(DECODED_TIME_RE.finditer(decoded.stderr))
    if decoded.returncode != 0 or not times:
        raise LoaderError(
            Text(
                "This recording could not be decoded (%(error)s). Is it damaged?",
                error=_ffmpeg_error(decoded.stderr),
            )
        )
    return _seconds(times[-1])


def converted_path(path: Path) -> Path:
    """Where the MP3 made from an upload is stored: beside it, named after it."""
    return path.with_name(f"{path.name}.16k.mp3")


def convert(path: Path, *, seconds: float) -> Path:
    """Mono 16 kHz MP3 beside the original, at the highest bitrate that fits the cap."""
    bitrate = BITRATES_KBIT[-1]
    for candidate in BITRATES_KBIT:
        if seconds * candidate * 1000 / 8 <= settings.AUDIO_TRANSCRIBED_MAX_BYTES * 0.97:
            bitrate = candidate
            break
    target = converted_path(path)
    partial = target.with_name(target.name + ".partial")
    result = _ffmpeg(
        "-y",
        "-i",
        str(path),
        "-vn",  # a video's sound only (MP4, WebM)
        "-ac",
        "1",
        "-ar",
        "16000",
        "-c:a",
        "libmp3lame",
        "-b:a",
        f"{bitrate}k",
        "-f",
        "mp3",
        str(partial),
    )
    if result.returncode != 0 or not partial.exists() or not partial.stat().st_size:
        partial.unlink(missing_ok=True)
        raise LoaderError(
            Text(
                "This recording could not be converted for transcription (%(error)s). "
                "Is it damaged?",
                error=_ffmpeg_error(result.stderr),
            )
        )
    partial.replace(target)
    return target


@dataclass(frozen=True)
class Prepared:
    path: Path  # the file sent to the speech model: the upload, or the MP3 beside it
    seconds: float


def prepare(path: Path) -> Prepared:
    """The file to transcribe and its length, converted when it has to be; within the caps."""
    size = path.stat().st_size
    if size > settings.AUDIO_MAX_BYTES:
        raise LoaderError(
            Text(
                "This recording is %(size)s MiB; Loupe reads recordings up to %(max)s MiB "
                "(AUDIO_MAX_BYTES).",
                size=f"{size / MIB:.1f}",
                max=f"{settings.AUDIO_MAX_BYTES / MIB:.0f}",
            )
        )
    with path.open("rb") as file:
        kind = container(file.read(64))
    seconds = duration_seconds(path)
    _check_length(seconds)
    if kind in SENT_AS_UPLOADED and size <= settings.AUDIO_TRANSCRIBED_MAX_BYTES:
        return Prepared(path=path, seconds=seconds)
    converted = convert(path, seconds=seconds)
    size = converted.stat().st_size
    if size > settings.AUDIO_TRANSCRIBED_MAX_BYTES:
        raise LoaderError(
            Text(
                "This recording is %(size)s MiB even as mono 16 kHz MP3; Loupe transcribes up "
                "to %(max)s MiB (AUDIO_TRANSCRIBED_MAX_BYTES). Split it and upload the parts.",
                size=f"{size / MIB:.1f}",
                max=f"{settings.AUDIO_TRANSCRIBED_MAX_BYTES / MIB:.0f}",
            )
        )
    seconds = duration_seconds(converted)
    _check_length(seconds)
    return Prepared(path=converted, seconds=seconds)


def _check_length(seconds: float) -> None:
    if seconds > settings.AUDIO_MAX_SECONDS:
        raise LoaderError(
            Text(
                "This recording lasts %(length)s; Loupe transcribes up to %(max)s "
                "(AUDIO_MAX_SECONDS). Split it and upload the parts.",
                length=_clock(seconds),
                max=_clock(settings.AUDIO_MAX_SECONDS),
            )
        )


def _clock(seconds: float) -> str:
    whole = round(seconds)
    return f"{whole // 3600}:{whole % 3600 // 60:02d}:{whole % 60:02d}"


def load(path: Path, *, user: User | None = None) -> tuple[list[Passage], Text | str]:
    """The words spoken in the recording, and the reader that transcribed them."""
    prepared = prepare(path)
    transcript = stt.transcribe(prepared.path, seconds=prepared.seconds, user=user)
    if not transcript.text.strip():
        raise LoaderError(
            Text(
                "No speech found in this recording (transcribed by %(reader)s).",
                reader=transcript.reader,
            )
        )
    return [Passage(text=transcript.text, page=None)], transcript.reader
