"""Reading images and scanned pages: a vision model when configured, else the local OCR.

Every call writes a usage row of kind "vision".
"""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass

import openai
from django.conf import settings
from django.contrib.auth.models import User
from PIL import Image, ImageOps

from billing.services import record_usage
from providers import local_ocr
from providers.errors import ProviderError
from providers.openai_client import client, describe_error, remote_configured, retried
from providers.tokens import reported_or_estimated
from texts import Text

# Vision APIs scale larger images down to about this anyway; sending more only costs bandwidth.
REMOTE_MAX_SIDE = 2048

PROMPT = (
    "Transcribe all legible text in this image verbatim, in reading order, keeping its line "
    "breaks. Then, after a blank line, describe the image in one to three sentences. Write "
    "the description in the language of the text in the image (English if there is none). "
    "Answer with the transcription and the description only, no headings or remarks. If the "
    "image is blank, answer with nothing at all."
)


@dataclass(frozen=True)
class VisionResult:
    text: str
    model: str

    @property
    def reader(self) -> Text | str:
        """How the source info names the reader: "rapidocr" or "vision model <name>"."""
        if self.model == local_ocr.MODEL_NAME:
            return local_ocr.READER_NAME
        return Text("vision model %(model)s", model=self.model)


def remote_vision_configured() -> bool:
    return remote_configured() and bool(settings.VISION_MODEL)


def active_reader() -> Text | str:
    """The reader name a call would use now, for messages written before any call."""
    if remote_vision_configured():
        return Text("vision model %(model)s", model=settings.VISION_MODEL)
    return local_ocr.READER_NAME


def read_image(image: bytes | Image.Image, *, user: User | None) -> VisionResult:
    """All legible text of an image (and, from a vision model, a short description)."""
    picture = _upright_rgb(_open(image) if isinstance(image, bytes) else image)
    if not remote_vision_configured():
        return VisionResult(
            text=local_ocr.read_text(picture, user=user), model=local_ocr.MODEL_NAME
        )
    return _read_remote(picture, user=user)


def _open(data: bytes) -> Image.Image:
    # Pillow refuses images above its pixel limit (decompression bombs); keep it at ours.
    Image.MAX_IMAGE_PIXELS = settings.IMAGE_MAX_PIXELS
    try:
        picture = Image.open(io.BytesIO(data))
        picture.load()
    except Image.DecompressionBombError as exc:
        raise ProviderError(
            Text(
                "The image has more pixels than Loupe reads (%(max)s, IMAGE_MAX_PIXELS).",
                max=settings.IMAGE_MAX_PIXELS,
            )
        ) from exc
    except (OSError, SyntaxError, ValueError) as exc:
        raise ProviderError(
            Text("The image could not be decoded (%(error)s).", error=str(exc))
        ) from exc
    return picture


def _upright_rgb(picture: Image.Image) -> Image.Image:
    """Turn a photo as its camera says it was held, and flatten transparency onto white."""
    picture = ImageOps.exif_transpose(picture) or picture
    if picture.mode in ("RGBA", "LA", "PA") or (
        picture.mode == "P" and "transparency" in picture.info
    ):
        rgba = picture.convert("RGBA")
        background = Image.new("RGBA", rgba.size, "white")
        return Image.alpha_composite(background, rgba).convert("RGB")
    if picture.mode != "RGB":
        return picture.convert("RGB")
    return picture


def _read_remote(picture: Image.Image, *, user: User | None) -> VisionResult:
    model = settings.VISION_MODEL
    if max(picture.size) > REMOTE_MAX_SIDE:
        picture = picture.copy()
        picture.thumbnail((REMOTE_MAX_SIDE, REMOTE_MAX_SIDE))
    buffer = io.BytesIO()
    picture.save(buffer, format="PNG")
    data_url = "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")
    try:
        response = retried(
            lambda: client().chat.completions.create(
                model=model,
                messages=[
                    {
                        "role": "user",
                        "content": [
                            {"type": "text", "text": PROMPT},
                            {"type": "image_url", "image_url": {"url": data_url}},
                        ],
                    }
                ],
                temperature=0,
            )
        )
        if isinstance(response, str):
            # A body that is not JSON (a proxy's error page) comes back as plain text.
            raise ValueError(f"a response that is not JSON: {response[:80]!r}")
        usage = response.usage
        text = (response.choices[0].message.content or "") if response.choices else ""
        record_usage(
            user=user,
            kind="vision",
            model=model,
            input_tokens=reported_or_estimated(usage, "prompt_tokens", PROMPT),
            output_tokens=reported_or_estimated(usage, "completion_tokens", text),
            images=1,
        )
    except (openai.OpenAIError, ValueError, TypeError, KeyError, AttributeError) as exc:
        raise ProviderError(describe_error("vision", exc)) from exc
    return VisionResult(text=text.strip(), model=model)
