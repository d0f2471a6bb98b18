"""Images become sources: detected by content, read by the vision reader, capped in size."""

import io
import struct
import zlib

import pytest
from django.core.files.base import ContentFile
from PIL import Image

from billing.models import Usage
from ingest.loaders import detect_kind, load_passages
from ingest.passages import LoaderError
from ingest.services import add_source, process_source
from ingest.tests.pictures import text_image
from library.models import Source

pytestmark = pytest.mark.django_db

SENTENCE = "Loupe reads the words in this picture."


def image_bytes(image: Image.Image, format: str = "PNG") -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format=format)
    return buffer.getvalue()


def png_claiming(width: int, height: int) -> bytes:
    """A tiny PNG whose header claims a huge size: a decompression bomb's first bytes."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data)
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)  # 8-bit greyscale
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\x00" * 1024))
        + chunk(b"IEND", b"")
    )


@pytest.mark.parametrize("format", ["PNG", "JPEG", "WEBP", "GIF", "TIFF"])
def test_each_image_format_is_recognised_by_its_bytes_whatever_the_name(format):
    data = image_bytes(Image.new("RGB", (4, 4), "white"), format)

    assert detect_kind("upload.bin", data[:2048]) == "image"


@pytest.mark.local_models
def test_a_drawn_sentence_comes_out_as_text_through_the_local_ocr(
    fake_openai, notebook, add_ready_source
):
    picture = image_bytes(text_image([SENTENCE]))

    source = add_ready_source(notebook, picture, name="photo.png")

    assert source.kind == Source.Kind.IMAGE
    assert source.reader == "rapidocr"
    assert source.page_count is None
    chunk = source.chunks.get()
    assert chunk.text == SENTENCE
    assert chunk.page is None
    usage = Usage.objects.get(kind="vision")
    assert (usage.user, usage.model) == (notebook.owner, "local/rapidocr")


def test_an_image_goes_to_the_vision_model_when_one_is_configured(fake_openai, settings, tmp_path):
    settings.VISION_MODEL = "fake-vision"
    fake_openai.vision_replies.append("LOUPE\n\nA magnifying glass over a page.")
    path = tmp_path / "logo.webp"
    path.write_bytes(image_bytes(Image.new("RGBA", (64, 48), (0, 0, 0, 0)), "WEBP"))

    passages, page_count, reader, _, _ = load_passages("image", path)

    assert [(passage.text, passage.page) for passage in passages] == [
        ("LOUPE\n\nA magnifying glass over a page.", None)
    ]
    assert (page_count, reader) == (None, "vision model fake-vision")
    assert len(fake_openai.vision_requests) == 1
    assert Usage.objects.get(kind="vision").model == "fake-vision"


@pytest.mark.local_models
def test_an_image_without_text_fails(tmp_path):
    path = tmp_path / "blank.png"
    path.write_bytes(image_bytes(Image.new("RGB", (300, 200), "white")))

    with pytest.raises(LoaderError, match="No text could be read from this image"):
        load_passages("image", path)


def test_an_image_over_the_byte_cap_fails_naming_the_cap(settings, tmp_path):
    settings.IMAGE_MAX_BYTES = 1024
    path = tmp_path / "big.png"
    path.write_bytes(image_bytes(Image.effect_noise((200, 200), 64)))

    with pytest.raises(LoaderError) as failure:
        load_passages("image", path)

    assert "IMAGE_MAX_BYTES" in str(failure.value)
    assert not Usage.objects.exists()


def test_an_image_over_the_pixel_cap_fails_naming_the_cap(settings, tmp_path):
    settings.IMAGE_MAX_PIXELS = 10_000
    path = tmp_path / "wide.png"
    path.write_bytes(image_bytes(Image.new("RGB", (150, 100), "white")))  # 15,000 pixels

    with pytest.raises(LoaderError) as failure:
        load_passages("image", path)

    assert "IMAGE_MAX_PIXELS" in str(failure.value)


def test_a_decompression_bomb_fails_cleanly(tmp_path):
    path = tmp_path / "bomb.png"
    path.write_bytes(png_claiming(100_000, 100_000))  # ten billion pixels in ~100 bytes

    with pytest.raises(LoaderError) as failure:
        load_passages("image", path)

    assert "IMAGE_MAX_PIXELS" in str(failure.value)


def test_a_damaged_image_fails_with_a_readable_message(tmp_path):
    path = tmp_path / "broken.png"
    path.write_bytes(image_bytes(text_image([SENTENCE]))[:200])

    with pytest.raises(LoaderError, match="could not be read as an image"):
        load_passages("image", path)


def test_a_bomb_upload_ends_failed_with_the_reason(fake_openai, notebook):
    added = add_source(
        owner=notebook.owner,
        notebook=notebook,
        upload=ContentFile(png_claiming(100_000, 100_000), name="bomb.png"),
    )

    source = process_source(source_id=added.source.pk)

    assert (source.kind, source.status) == ("image", Source.Status.FAILED)
    assert "IMAGE_MAX_PIXELS" in source.error
