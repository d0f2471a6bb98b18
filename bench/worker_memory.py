"""Worker memory: peak RSS of a process with the local models loaded and
used once: e5 (embeds 8 real chunks), rapidocr (reads a rendered PDF page) and whisper-base
(loaded; transcribes one second of tone). Target <= 1.5 GB.

The measuring runs in a child process, so nothing else this script loads counts.

    LOUPE_DATA_DIR=/tmp/loupe-bench .venv/bin/python bench/worker_memory.py
"""

from __future__ import annotations

import json
import math
import resource
import struct
import subprocess
import sys
import tempfile
import wave
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _setup import SHARED, django_setup  # noqa: E402

PDF = SHARED / "pdfs" / "sample-files" / "GeoTopo-komprimiert.pdf"
TARGET_MB = 1536


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def tone(path: Path) -> None:
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(16000)
        out.writeframes(
            b"".join(
                struct.pack("<h", int(8000 * math.sin(2 * math.pi * 440 * i / 16000)))
                for i in range(16000)
            )
        )


def child() -> None:
    django_setup()
    steps: dict[str, float] = {"django": rss_mb()}

    from embedding_efficiency import real_chunks

    from providers import local_e5

    local_e5.embed_passages(real_chunks(8))
    steps["e5"] = rss_mb()

    import pypdfium2

    from providers import local_ocr

    page = pypdfium2.PdfDocument(PDF)[0].render(scale=2).to_pil()
    local_ocr.read_text(page, user=None)
    steps["rapidocr"] = rss_mb()

    from providers import local_whisper
    from providers.errors import ProviderError

    try:
        with tempfile.TemporaryDirectory() as folder:
            audio = Path(folder) / "tone.wav"
            tone(audio)
            local_whisper.transcribe(audio, seconds=1.0, user=None)
        steps["whisper"] = rss_mb()
    except ProviderError as exc:
        print(f"whisper-base not loaded: {exc}", file=sys.stderr)
    print(json.dumps(steps))


def main() -> None:
    if sys.argv[1:] == ["--child"]:
        child()
        return
    result = subprocess.run(
        [sys.executable, __file__, "--child"], capture_output=True, text=True, check=True
    )
    steps = json.loads(result.stdout.strip().splitlines()[-1])
    peak = max(steps.values())
    for name, mb in steps.items():
        print(f"peak RSS after {name:9} {mb:7.0f} MB")
    print(f"peak RSS {peak:.0f} MB (target <= {TARGET_MB} MB)")
    print(
        json.dumps(
            {
                "bench": "worker_memory",
                "peak_rss_mb": round(peak),
                "steps_mb": {k: round(v) for k, v in steps.items()},
                "target_mb": TARGET_MB,
            }
        )
    )


if __name__ == "__main__":
    main()
