import socket

import pytest
from PIL import Image, ImageOps

from billing.models import Usage
from ingest.tests.pictures import text_image
from providers import local_ocr, vision

pytestmark = [pytest.mark.local_models, pytest.mark.django_db]


@pytest.fixture
def no_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise OSError("the tests allow no network here")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


@pytest.fixture
def fresh_engine(monkeypatch):
    # Loading the engine is the step that could fetch models; make this test do it.
    monkeypatch.setattr(local_ocr, "_engine", None)


def test_the_local_ocr_loads_and_reads_without_any_network(no_network, fresh_engine, owner):
    lines = ["First line of the page", "and the second one below it"]

    text = local_ocr.read_text(text_image(lines).convert("RGB"), user=owner)

    assert text == "\n".join(lines)
    usage = Usage.objects.get()
    assert (usage.user, usage.kind, usage.model) == (owner, "vision", "local/rapidocr")
    assert (usage.input_tokens, usage.output_tokens, usage.images) == (0, 0, 1)


def test_a_photo_is_turned_as_its_exif_orientation_says(tmp_path):
    upright = text_image(["Held sideways by the camera"])
    # Stored turned a quarter, with EXIF orientation 6: "rotate 90 degrees clockwise to view".
    stored = upright.rotate(90, expand=True)
    exif = Image.Exif()
    exif[0x0112] = 6
    path = tmp_path / "photo.jpg"
    stored.save(path, format="JPEG", exif=exif, quality=95)
    assert ImageOps.exif_transpose(Image.open(path)).size == upright.size

    result = vision.read_image(path.read_bytes(), user=None)

    assert result.text == "Held sideways by the camera"
