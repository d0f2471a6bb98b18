"""rapidocr on onnxruntime: the offline reader of images and scanned pages.

The detection, orientation and recognition models ship inside the rapidocr wheel, so nothing
is downloaded at run time.
"""

from __future__ import annotations

import threading
from typing import Any

from django.contrib.auth.models import User
from PIL import Image

from billing.services import record_usage

MODEL_NAME = "local/rapidocr"
READER_NAME = "rapidocr"

_lock = threading.Lock()
_engine: Any = None


def _get_engine() -> Any:
    global _engine
    with _lock:
        if _engine is None:
            from rapidocr import RapidOCR

            # rapidocr logs every call at INFO; its result says all that matters here.
            _engine = RapidOCR(params={"Global.log_level": "error"})
        return _engine


def read_text(image: Image.Image, *, user: User | None) -> str:
    """The text lines of an image in reading order (top to bottom, left to right)."""
    engine = _get_engine()
    with _lock:  # one engine per process; its sessions are not shared across threads
        result = engine(image)
    # Metered like every model call, at no cost: the admin sees what the OCR did.
    record_usage(user=user, kind="vision", model=MODEL_NAME, images=1)
    return "\n".join(line for line in (result.txts or ()) if line.strip())
