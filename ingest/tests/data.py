"""Where the tests find the real third-party documents: ../shared/data beside the checkout
(LOUPE_SHARED_DATA overrides it)."""

from __future__ import annotations

import os
from pathlib import Path

SHARED_DATA = Path(
    os.environ.get("LOUPE_SHARED_DATA", Path(__file__).resolve().parents[3] / "shared" / "data")
)
PDFS = SHARED_DATA / "pdfs"
