"""Where the tests find the real third-party documents: ../shared/data beside the checkout
(LOUPE_SHARED_DATA overrides it)."""

from __future__ import annotations

import os
from pathlib import Path

import pypdfium2 as pdfium

SHARED_DATA = Path(
    os.environ.get("LOUPE_SHARED_DATA", Path(__file__).resolve().parents[3] / "shared" / "data")
)
PDFS = SHARED_DATA / "pdfs"
# Real office files, e-books, RTF and HTML files, and broken ones (files/odd).
FORMATS = SHARED_DATA / "formats" / "files"
# The Debian Reference in English (261 pages), with an outline.
MANUAL = SHARED_DATA / "manual-qa" / "debian-reference.en.pdf"


def outline_chapters() -> list[str]:
    """The titles of the manual's chapters, as its outline names them."""
    document = pdfium.PdfDocument(MANUAL)
    try:
        return [bookmark.get_title() for bookmark in document.get_toc() if bookmark.level == 0]
    finally:
        document.close()
