"""A video overview rendered: each slide drawn by Pillow at 1280×720, its notes spoken by the
speech engine (providers/tts.py), and the whole encoded once by the ffmpeg of imageio-ffmpeg
as an MP4 (H.264 video, AAC audio) that shows each slide while its narration plays.

Bounded: the narration may last VIDEO_MAX_SECONDS, the encoding VIDEO_RENDER_SECONDS (and no
longer than the document's deadline), the file VIDEO_MAX_BYTES. Everything is made in a
temporary folder, so a render that fails or runs past its bound leaves nothing behind."""

from __future__ import annotations

import subprocess
import tempfile
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from PIL import Image, ImageDraw, ImageFont

from generation.documents.decks import ACCENT, MUTED, fonts
from generation.documents.inputs import GenerationFailed
from notebooks.markers import strip_markers
from providers import tts
from texts import Text

WIDTH, HEIGHT = 1280, 720
MARGIN = 72
BACKGROUND = (0xFF, 0xFF, 0xFF)
TEXT = (0x1B, 0x1F, 0x24)
BAND = (0xE8, 0xEF, 0xF6)  # behind the heading
PAUSE_SECONDS = 0.6  # silence after a slide's narration, before the next slide
TITLE_SECONDS = 3.0  # the title slide, shown while nothing is said


@dataclass(frozen=True)
class RenderedVideo:
    mp4: bytes
    seconds: float
    engine: Text


def draw_slide(
    heading: str, bullets: list[str], *, footnotes: list[str] | None = None, title: bool = False
) -> Image.Image:
    """One slide as a 1280×720 picture: the heading on a band, the bullets below, the
    passages they cite at the foot. A title slide is its heading alone, centred."""
    chosen = fonts()
    image = Image.new("RGB", (WIDTH, HEIGHT), BACKGROUND)
    draw = ImageDraw.Draw(image)
    if title:
        font = _font(chosen.bold, 56)
        lines = textwrap.wrap(heading, width=36)[:4]
        height = len(lines) * 70
        top = (HEIGHT - height) // 2
        for index, line in enumerate(lines):
            draw.text((WIDTH // 2, top + index * 70), line, font=font, fill=ACCENT, anchor="ma")
        return image
    draw.rectangle((0, 0, WIDTH, 132), fill=BAND)
    heading_font = _font(chosen.bold, 44)
    heading_lines = textwrap.wrap(heading, width=46)[:2]
    for index, line in enumerate(heading_lines):
        heading_y = 66 - 26 * (len(heading_lines) - 1) + index * 52
        draw.text((MARGIN, heading_y), line, font=heading_font, fill=ACCENT, anchor="lm")
    notes = footnotes or []
    bottom = HEIGHT - 40 - 22 * len(notes)
    # The largest size at which every bullet fits between the band and the footnotes.
    for size in (34, 30, 27, 24, 21, 18):
        font = _font(chosen.regular, size)
        wrapped = [_wrap(bullet, font, WIDTH - 2 * MARGIN - 40) for bullet in bullets]
        needed = sum(len(lines) * size * 1.3 + size * 0.7 for lines in wrapped)
        if needed <= bottom - 170:
            break
    y = 170.0
    for lines in wrapped:
        draw.ellipse(
            (MARGIN + 4, y + size * 0.35, MARGIN + 4 + size * 0.4, y + size * 0.75), fill=ACCENT
        )
        for line in lines:
            draw.text((MARGIN + 40, y), line, font=font, fill=TEXT)
            y += size * 1.3
        y += size * 0.7
    small = _font(chosen.regular, 17)
    for index, line in enumerate(notes):
        draw.text((MARGIN, bottom + 8 + index * 22), line[:140], font=small, fill=MUTED)
    return image


def _wrap(text: str, font: ImageFont.FreeTypeFont, width: float) -> list[str]:
    """The text in lines no wider than `width` pixels in `font`, broken between words."""
    lines: list[str] = []
    for word in text.split():
        if lines and font.getlength(f"{lines[-1]} {word}") <= width:
            lines[-1] = f"{lines[-1]} {word}"
        else:
            lines.append(word)
    return lines


def _font(path: Path, size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(str(path), size)


def render(
    data: dict[str, Any],
    places: dict[int, str],
    *,
    language: str,
    user: User | None,
    remaining: Callable[[], float],
    on_progress: Callable[[int, int], None] | None = None,
) -> RenderedVideo:
    """The deck `data` (title, slides with notes) as an MP4; `remaining()` says how many
    seconds the document's deadline has left. GenerationFailed past a bound."""
    from generation.documents.decks import footnotes as footnotes_of

    engine = tts.engine_name(language)
    slides = data["slides"]
    total = len(slides) + 1  # each slide spoken, then the encoding
    with tempfile.TemporaryDirectory(prefix="loupe-video-") as folder:
        root = Path(folder)
        shown: list[tuple[Path, float]] = []
        title = root / "slide-000.png"
        draw_slide(data["title"], [], title=True).save(title)
        pcm_path = root / "narration.pcm"
        seconds = 0.0
        with pcm_path.open("wb") as pcm:
            pcm.write(_silence(TITLE_SECONDS))
            shown.append((title, TITLE_SECONDS))
            seconds += TITLE_SECONDS
            for number, slide in enumerate(slides, start=1):
                if on_progress:
                    on_progress(number - 1, total)
                picture = root / f"slide-{number:03}.png"
                draw_slide(
                    strip_markers(slide["heading"]),
                    slide["bullets"],
                    footnotes=footnotes_of(slide, places),
                ).save(picture)
                said = _narration(slide)
                spoken = 0.0
                for piece in tts.split_text(said, limit=settings.TTS_MAX_INPUT_CHARS):
                    if remaining() <= 0:
                        raise _past_deadline()
                    speech = tts.speak(piece, speaker="A", language=language, user=user)
                    pcm.write(speech.pcm)
                    spoken += speech.seconds
                pcm.write(_silence(PAUSE_SECONDS))
                spoken += PAUSE_SECONDS
                shown.append((picture, spoken))
                seconds += spoken
                if seconds > settings.VIDEO_MAX_SECONDS:
                    raise GenerationFailed(
                        Text(
                            "The video's narration runs past VIDEO_MAX_SECONDS (%(seconds)s s) "
                            "at slide %(slide)s; raise it or make a brief video. Nothing was "
                            "kept.",
                            seconds=f"{settings.VIDEO_MAX_SECONDS:g}",
                            slide=number,
                        )
                    )
        if on_progress:
            on_progress(len(slides), total)
        mp4 = root / "overview.mp4"
        _encode(shown, pcm_path, mp4, timeout=min(settings.VIDEO_RENDER_SECONDS, remaining()))
        size = mp4.stat().st_size
        if size > settings.VIDEO_MAX_BYTES:
            raise GenerationFailed(
                Text(
                    "The video came to %(size)s bytes, more than VIDEO_MAX_BYTES (%(limit)s); "
                    "raise it or make a brief video. Nothing was kept.",
                    size=size,
                    limit=settings.VIDEO_MAX_BYTES,
                )
            )
        return RenderedVideo(mp4=mp4.read_bytes(), seconds=seconds, engine=engine)


def _narration(slide: dict[str, Any]) -> str:
    """What is said over a slide: its notes, else its heading and bullets."""
    notes = strip_markers(slide.get("notes") or "").strip()
    if notes:
        return notes
    return " ".join([f"{strip_markers(slide['heading'])}.", *map(strip_markers, slide["bullets"])])


def _silence(seconds: float) -> bytes:
    return bytes(round(seconds * tts.SAMPLE_RATE) * 2)


def _past_deadline() -> GenerationFailed:
    return GenerationFailed(
        Text(
            "Rendering the video ran past GENERATION_TIMEOUT_SECONDS (%(seconds)s s); raise it "
            "or make a brief video. Nothing was kept.",
            seconds=f"{settings.GENERATION_TIMEOUT_SECONDS:g}",
        )
    )


def _encode(shown: list[tuple[Path, float]], pcm: Path, mp4: Path, *, timeout: float) -> None:
    """The pictures, each for its seconds, over the narration, as H.264 + AAC."""
    if timeout <= 0:
        raise _past_deadline()
    listing = mp4.with_suffix(".txt")
    lines = []
    for picture, seconds in shown:
        lines += [f"file '{picture.name}'", f"duration {seconds:.3f}"]
    # The concat demuxer takes the last picture's duration only when it is named again.
    lines.append(f"file '{shown[-1][0].name}'")
    listing.write_text("\n".join(lines) + "\n")
    command = [
        tts.ffmpeg_exe(), "-hide_banner", "-loglevel", "error", "-nostdin",
        "-f", "concat", "-safe", "0", "-i", str(listing),
        "-f", "s16le", "-ar", str(tts.SAMPLE_RATE), "-ac", "1", "-i", str(pcm),
        # Still pictures: a few frames a second keep the file small and the cuts on time.
        "-vf", f"fps=5,scale={WIDTH}:{HEIGHT},format=yuv420p",
        "-c:v", "libx264", "-preset", "veryfast", "-tune", "stillimage", "-crf", "28",
        "-c:a", "aac", "-b:a", "96k", "-ar", "48000",
        "-shortest", "-movflags", "+faststart", "-y", str(mp4),
    ]  # fmt: skip
    try:
        result = subprocess.run(command, capture_output=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as exc:
        raise GenerationFailed(
            Text(
                "Rendering the video took longer than %(seconds)s s (VIDEO_RENDER_SECONDS, or "
                "what was left of GENERATION_TIMEOUT_SECONDS); raise it or make a brief "
                "video. Nothing was kept.",
                seconds=f"{timeout:.3g}",
            )
        ) from exc
    if result.returncode != 0 or not mp4.exists():
        raise GenerationFailed(
            Text(
                "The video could not be encoded (%(error)s).",
                error=tts.ffmpeg_message(result.stderr),
            )
        )
