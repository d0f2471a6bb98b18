"""Images (PNG, JPEG, WebP, GIF, TIFF): one vision call, one passage without a page."""

from __future__ import annotations

import warnings
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import User
from PIL import Image

from ingest.passages import LoaderError, Passage
from providers import vision

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
            f"This image is {size / (1024 * 1024):.1f} MiB; Loupe reads images up to "
            f"{settings.IMAGE_MAX_BYTES / (1024 * 1024):.0f} MiB (IMAGE_MAX_BYTES)."
        )
    too_many_pixels = LoaderError(
        f"This image has more than {settings.IMAGE_MAX_PIXELS:,} pixels, the most Loupe reads "
        "(IMAGE_MAX_PIXELS). Scale it down and upload it again."
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
        # Only the first frame of an animated GIF or a multi-page TIFF is read.
        image.load()
    except Image.DecompressionBombError as exc:
        raise too_many_pixels from exc
    except LoaderError:
        raise
    except Exception as exc:  # Pillow raises many types for damaged files
        raise LoaderError(
            f"This file could not be read as an image ({exc}). Is it damaged?"
        ) from exc
    return image


def load(path: Path, *, user: User | None = None) -> tuple[list[Passage], str]:
    """The image's text (and, from a vision model, its description), and the reader used."""
    with open_image(path) as image:
        result = vision.read_image(image, user=user)
    if not result.text.strip():
        raise LoaderError(f"No text could be read from this image (read by {result.reader}).")
    return [Passage(text=result.text, page=None)], result.reader
