"""Pictures of text made in the tests with Pillow and its bundled font: nothing to ship."""

from __future__ import annotations

from pathlib import Path

from PIL import Image, ImageDraw, ImageFont


def text_image(lines: list[str], *, width: int = 1240, font_size: int = 40) -> Image.Image:
    """Black lines of text on white, like a clean scan at 150 dpi."""
    font = ImageFont.load_default(size=font_size)
    line_height = font_size * 2
    image = Image.new("RGB", (width, line_height * (len(lines) + 2)), "white")
    draw = ImageDraw.Draw(image)
    for number, line in enumerate(lines, start=1):
        draw.text((60, number * line_height), line, fill="black", font=font)
    return image


def scanned_pdf(path: Path, pages: list[Image.Image]) -> Path:
    """A PDF made of page images only, without a text layer, as a scanner writes it."""
    first, *rest = pages
    first.save(path, format="PDF", resolution=150, save_all=True, append_images=rest)
    return path
