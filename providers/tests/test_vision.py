import base64
import io

import pytest
from PIL import Image

from billing.models import Usage
from providers import vision
from providers.errors import ProviderError

pytestmark = pytest.mark.django_db


@pytest.fixture
def fake_vision(fake_openai, settings):
    settings.VISION_MODEL = "fake-vision"
    return fake_openai


def test_a_vision_call_sends_one_image_and_the_transcription_prompt(fake_vision, owner):
    fake_vision.vision_replies.append("  EXIT\n\nA green sign above a door.  ")

    result = vision.read_image(Image.new("RGB", (40, 30), "green"), user=owner)

    assert (result.text, result.model) == ("EXIT\n\nA green sign above a door.", "fake-vision")
    [request] = fake_vision.vision_requests
    assert request.body["model"] == "fake-vision"
    text, picture = request.body["messages"][0]["content"]
    assert "verbatim" in text["text"]
    assert "language" in text["text"]
    assert picture["image_url"]["url"].startswith("data:image/png;base64,")
    usage = Usage.objects.get()
    assert (usage.user, usage.kind, usage.model) == (owner, "vision", "fake-vision")
    assert usage.input_tokens > 0
    assert usage.images == 1


def test_a_large_image_is_scaled_down_before_it_is_sent(fake_vision):
    fake_vision.vision_replies.append("A white rectangle.")

    vision.read_image(Image.new("RGB", (5000, 1000), "white"), user=None)

    url = fake_vision.vision_requests[0].body["messages"][0]["content"][1]["image_url"]["url"]
    sent = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))
    assert sent.size == (2048, 410)


def test_a_vision_reply_that_is_not_json_is_a_provider_error(fake_vision):
    fake_vision.fail_next("garbage")

    with pytest.raises(ProviderError, match="vision model .* gave an answer Loupe cannot use"):
        vision.read_image(Image.new("RGB", (20, 20)), user=None)


def test_bytes_that_are_no_image_are_a_provider_error(fake_vision):
    with pytest.raises(ProviderError, match="could not be decoded"):
        vision.read_image(b"not an image at all", user=None)

    assert fake_vision.requests == []
