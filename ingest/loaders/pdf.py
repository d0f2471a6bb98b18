"""PDFs by their text layer, one passage per page (vision capture comes with its own issue)."""

from __future__ import annotations

import logging
import unicodedata
from pathlib import Path

from django.conf import settings
from pypdf import PdfReader
from pypdf.errors import FileNotDecryptedError, PdfReadError

from ingest.passages import LoaderError, Passage

logger = logging.getLogger(__name__)

MIN_VISIBLE_CHARS = 20
MIN_LETTER_SHARE = 0.6


def is_legible(page_text: str) -> bool:
    """A page has a usable text layer: ≥ 20 visible characters, ≥ 60 % of them letters.

    Fonts without a Unicode map yield glyph codes and punctuation soup; that is not text.
    """
    visible = [ch for ch in page_text if not ch.isspace()]
    if len(visible) < MIN_VISIBLE_CHARS:
        return False
    letters = sum(ch.isalpha() for ch in visible)
    return letters / len(visible) >= MIN_LETTER_SHARE


def open_reader(path: Path) -> PdfReader:
    try:
        reader = PdfReader(path)
        if reader.is_encrypted:
            # Many PDFs are "encrypted" only to restrict printing and open with no password.
            try:
                opened = reader.decrypt("")
            except (NotImplementedError, PdfReadError) as exc:
                raise LoaderError(
                    f"This PDF is encrypted in a way Loupe cannot open ({exc}). "
                    "Upload a copy without password protection."
                ) from exc
            if not opened:
                raise LoaderError(
                    "This PDF is protected by a password. Upload a copy without password "
                    "protection (for example, print it to a new PDF)."
                )
        return reader
    except LoaderError:
        raise
    except Exception as exc:  # pypdf raises many types for damaged files
        raise LoaderError(f"This file could not be read as a PDF ({exc}). Is it damaged?") from exc


def load(path: Path) -> tuple[list[Passage], int]:
    reader = open_reader(path)
    try:
        page_count = len(reader.pages)
    except FileNotDecryptedError as exc:
        raise LoaderError(
            "This PDF is protected by a password; upload an unprotected copy."
        ) from exc
    except Exception as exc:
        raise LoaderError(f"The PDF's page list is damaged ({exc}).") from exc
    if page_count == 0:
        raise LoaderError("This PDF has no pages.")
    if page_count > settings.PDF_MAX_PAGES:
        raise LoaderError(
            f"This PDF has {page_count} pages; Loupe reads at most {settings.PDF_MAX_PAGES} "
            "pages per PDF (PDF_MAX_PAGES). Split it into smaller files."
        )
    passages: list[Passage] = []
    unreadable_pages = 0
    for number, page in enumerate(reader.pages, start=1):
        try:
            page_text = page.extract_text() or ""
        except Exception as exc:  # one broken page must not lose the others
            logger.warning("page %s of %s could not be read: %s", number, path.name, exc)
            unreadable_pages += 1
            continue
        # NFKC folds ligatures ("ﬁ" → "fi") and presentation forms, so words match searches.
        page_text = unicodedata.normalize("NFKC", page_text).replace("\x00", "")
        if is_legible(page_text):
            passages.append(Passage(text=page_text, page=number))
    if not passages:
        raise LoaderError(
            f"None of this PDF's {page_count} pages has a readable text layer (capture mode "
            "'text'): it is probably scanned or made of images. Reading scanned pages needs "
            "the vision capture mode, which this installation does not offer yet."
        )
    return passages, page_count
