"""Images (PNG, JPEG, WebP, GIF, TIFF): one vision call, one passage without a page.

A multi-page TIFF (a fax, a scanner's batch) is read like a scanned PDF: one vision call and
one passage per page, numbered from 1, blank pages skipped without a call.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import User
from PIL import Image

from ingest.passages import LoaderError, Passage
from providers import vision
from texts import Text

logger = logging.getLogger(__name__)

# Called with (pages read, page count, True: read as an image) after each page of a
# multi-page TIFF, as ingest.loaders.pdf.PageProgress.
PageProgress = Callable[[int, int, bool], None]

# A page is blank when, reduced to at most BLANK_SIDE pixels a side (which averages scanner
# noise away but keeps a 1-pixel stroke at half its darkness), fewer than BLANK_MAX_INK of
# its pixels differ from its background (its commonest grey) by more than BLANK_INK_LEVEL.
# On A4 at 150 dpi one line of 7-point text is four times that limit, three specks of dust
# a third of it (ingest/tests/test_blank_pages.py); a dirtier page is read.
BLANK_SIDE = 600
BLANK_INK_LEVEL = 64
BLANK_MAX_INK = 0.0001

MAGIC = (
    b"\x89PNG\r\n\x1a\n",
    b"\xff\xd8\xff",  # JPEG
    b"GIF87a",
    b"GIF89a",
    b"II*\x00",  # TIFF, little-endian
    b"MM\x00*",  # TIFF, big-endian
)


def is_image(head: bytes) -> bool:
    """PNG, JPEG, WebP, GIF or TIFF, by the first bytes of the file."""
    return head.startswith(MAGIC) or (head[:4] == b"RIFF" and head[8:12] == b"WEBP")


def open_image(path: Path) -> Image.Image:
    """Open an image within the byte and pixel caps; fail with a message for anything else."""
    size = path.stat().st_size
    if size > settings.IMAGE_MAX_BYTES:
        raise LoaderError(
            Text(
                "This image is %(size)s MiB; Loupe reads images up to %(max)s MiB "
                "(IMAGE_MAX_BYTES).",
                size=f"{size / (1024 * 1024):.1f}",
                max=f"{settings.IMAGE_MAX_BYTES / (1024 * 1024):.0f}",
            )
        )
    too_many_pixels = LoaderError(
        Text(
            "This image has more than %(max)s pixels, the most Loupe reads (IMAGE_MAX_PIXELS). "
            "Scale it down and upload it again.",
            max=f"{settings.IMAGE_MAX_PIXELS:,}",
        )
    )
    # Pillow refuses to open more than twice this many pixels: a decompression bomb, a small
    # file that unpacks to gigabytes.
    Image.MAX_IMAGE_PIXELS = settings.IMAGE_MAX_PIXELS
    try:
        with warnings.catch_warnings():
            # Pillow warns between the limit and twice it; the check below refuses those.
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            image = Image.open(path)
        width, height = image.size
        if width * height > settings.IMAGE_MAX_PIXELS:
            raise too_many_pixels
        # Only the first frame of an animated GIF is read; multi-page TIFFs: load_pages.
        image.load()
    except Image.DecompressionBombError as exc:
        raise too_many_pixels from exc
    except LoaderError:
        raise
    except Exception as exc:  # Pillow raises many types for damaged files
        raise LoaderError(
            Text(
                "This file could not be read as an image (%(error)s). Is it damaged?",
                error=str(exc),
            )
        ) from exc
    return image


def is_blank(picture: Image.Image) -> bool:
    """Nothing on the page for a reader: (almost) every pixel is its background colour."""
    grey = picture.convert("L")
    grey.thumbnail((BLANK_SIDE, BLANK_SIDE), Image.Resampling.BOX)
    histogram = grey.histogram()
    background = max(range(256), key=histogram.__getitem__)
    ink = sum(
        count for level, count in enumerate(histogram) if abs(level - background) > BLANK_INK_LEVEL
    )
    return ink < BLANK_MAX_INK * grey.width * grey.height


def page_count(picture: Image.Image) -> int:
    """The pages of a TIFF; every other image (an animated GIF too) is read as one."""
    return getattr(picture, "n_frames", 1) if picture.format == "TIFF" else 1


def load(
    path: Path, *, user: User | None = None, on_progress: PageProgress | None = None
) -> tuple[list[Passage], int | None, Text | str]:
    """The image's text (and, from a vision model, its description), its page count (None
    but for a multi-page TIFF) and the reader used."""
    with open_image(path) as image:
        pages = page_count(image)
        if pages > 1:
            return load_pages(image, pages, user=user, on_progress=on_progress)
        result = vision.read_image(image, user=user)
    if not result.text.strip():
        raise LoaderError(
            Text(
                "No text could be read from this image (read by %(reader)s).", reader=result.reader
            )
        )
    return [Passage(text=result.text, page=None)], None, result.reader


def load_pages(
    image: Image.Image, pages: int, *, user: User | None, on_progress: PageProgress | None
) -> tuple[list[Passage], int, Text | str]:
    """Every page of a multi-page TIFF as a passage of its own, within the caps."""
    if pages > settings.PDF_VISION_MAX_PAGES:
        raise LoaderError(
            Text(
                "This TIFF has %(pages)s pages; Loupe reads at most %(max)s pages as images per "
                "upload (PDF_VISION_MAX_PAGES). Split it into smaller files.",
                pages=pages,
                max=settings.PDF_VISION_MAX_PAGES,
            )
        )
    passages: list[Passage] = []
    blank = 0
    reader = vision.active_reader()
    for number in range(1, pages + 1):
        try:
            image.seek(number - 1)
            width, height = image.size
            # Pillow checks only the first page against its pixel limit.
            if width * height > settings.IMAGE_MAX_PIXELS:
                raise LoaderError(
                    Text(
                        "Page %(page)s of this TIFF has more than %(max)s pixels, the most "
                        "Loupe reads (IMAGE_MAX_PIXELS).",
                        page=number,
                        max=f"{settings.IMAGE_MAX_PIXELS:,}",
                    )
                )
            page = image.copy()
        except LoaderError:
            raise
        except Exception as exc:  # one broken page must not lose the others
            logger.warning("page %s of a TIFF could not be decoded: %s", number, exc)
            page = None
        if page is not None and is_blank(page):
            blank += 1
        elif page is not None:
            result = vision.read_image(page, user=user)
            reader = result.reader
            if result.text.strip():
                passages.append(Passage(text=result.text, page=number))
        if on_progress is not None:
            on_progress(number, pages, True)
    if not passages:
        if blank:
            unread = Text(
                "No text could be read from any of this TIFF's %(pages)s pages (read by "
                "%(reader)s; %(blank)s blank, not sent to it).",
                pages=pages,
                reader=reader,
                blank=blank,
            )
        else:
            unread = Text(
                "No text could be read from any of this TIFF's %(pages)s pages (read by "
                "%(reader)s).",
                pages=pages,
                reader=reader,
            )
        raise LoaderError(unread)
    return passages, pages, with_blank_note(reader, blank)


def with_blank_note(reader: Text | str, blank: int) -> Text | str:
    """The reader, and what the source info adds about blank pages no reader was asked to
    read."""
    if not blank:
        return reader
    return Text.counted(
        "%(reader)s; %(count)s blank page skipped",
        "%(reader)s; %(count)s blank pages skipped",
        blank,
        reader=reader,
    )
