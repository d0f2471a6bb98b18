"""A video overview: the model's slides drawn by Pillow, their notes spoken by the speech
engine, assembled by the ffmpeg Loupe ships into an MP4 (H.264 + AAC, 1280×720) whose
streams and length ffmpeg reads back; a render past its bound fails the document saying
so and leaves no file behind."""

import glob
import json
import re
import shutil
import tempfile
from pathlib import Path

import pytest
from django.core.management import call_command
from django.urls import reverse

from generation.documents.models import GeneratedDocument
from generation.documents.services import generate_document, request_document
from generation.tests.studio.conftest import DECK, reply
from providers import tts

DURATION_RE = re.compile(r"Duration: (\d+):(\d\d):(\d\d(?:\.\d+)?)")


def probe(path):
    """The MP4's stream lines and its length, as the ffmpeg of imageio-ffmpeg reads them."""
    described = tts.run_ffmpeg("-loglevel", "info", "-i", path).stderr.decode()
    streams = [line.strip() for line in described.splitlines() if "Stream #" in line]
    duration = DURATION_RE.search(described)
    assert duration, described
    hours, minutes, seconds = duration.groups()
    return streams, int(hours) * 3600 + int(minutes) * 60 + float(seconds)


def make_video(owner, notebook, video_format=""):
    document = request_document(
        user=owner, notebook=notebook, kind="video", video_format=video_format
    )
    generate_document(document_id=document.pk)
    document.refresh_from_db()
    return document


def leftovers() -> list[str]:
    return glob.glob(str(Path(tempfile.gettempdir()) / "loupe-video-*"))


def test_an_explainer_is_narrated_slides_as_an_h264_and_aac_mp4(
    client, fake_openai, owner, notebook, studio_sources
):
    fake_openai.chat_replies.append(reply(DECK))

    document = make_video(owner, notebook)

    assert document.status == GeneratedDocument.Status.READY, document.error
    assert document.video_format == "explainer"
    [request] = fake_openai.chat_requests
    assert request.body["response_format"]["json_schema"]["name"] == "video"
    schema = request.body["response_format"]["json_schema"]["schema"]
    assert (
        schema["properties"]["slides"]["minItems"],
        schema["properties"]["slides"]["maxItems"],
    ) == (6, 10)
    # Each slide's notes spoken, in order, in one voice, without markers.
    said = [request.body["input"] for request in fake_openai.speech_requests]
    assert said == [slide["notes"] for slide in DECK["slides"]]
    streams, seconds = probe(document.video.path)
    video, audio = streams
    assert "Video: h264" in video and "1280x720" in video and "yuv420p" in video
    assert "Audio: aac" in audio
    # The title's three seconds, then each slide's narration and its pause.
    words = sum(len(slide["notes"].split()) for slide in DECK["slides"])
    expected = 3 + words * fake_openai.speech_seconds_per_word + 6 * 0.6
    assert document.video_seconds == pytest.approx(expected, abs=0.3)
    assert seconds == pytest.approx(document.video_seconds, abs=0.5)
    assert document.citations.exists()

    client.force_login(owner)
    page = client.get(reverse("studio:document", args=[notebook.pk, document.pk])).content.decode()
    assert "<video" in page and reverse("studio:video", args=[notebook.pk, document.pk]) in page
    assert "Narration" in page and "Revise this slide" not in page
    response = client.get(reverse("studio:video", args=[notebook.pk, document.pk]))
    assert response["Content-Type"] == "video/mp4"
    assert b"".join(response.streaming_content)[4:8] == b"ftyp"


def test_a_brief_asks_for_a_few_slides_and_short_narration(
    fake_openai, owner, notebook, studio_sources
):
    fake_openai.chat_replies.append(reply({**DECK, "slides": DECK["slides"][:4]}))

    document = make_video(owner, notebook, "brief")

    assert document.status == GeneratedDocument.Status.READY, document.error
    schema = fake_openai.chat_requests[0].body["response_format"]["json_schema"]["schema"]
    assert (
        schema["properties"]["slides"]["minItems"],
        schema["properties"]["slides"]["maxItems"],
    ) == (3, 5)
    assert "about 35 words" in fake_openai.chat_requests[0].body["messages"][0]["content"]
    assert len(fake_openai.speech_requests) == 4
    assert probe(document.video.path)[1] == pytest.approx(document.video_seconds, abs=0.5)


def test_a_narration_past_its_bound_fails_the_video_and_keeps_no_file(
    fake_openai, settings, owner, notebook, studio_sources
):
    settings.VIDEO_MAX_SECONDS = 5
    fake_openai.chat_replies.append(reply(DECK))
    before = leftovers()

    document = make_video(owner, notebook)

    assert document.status == GeneratedDocument.Status.FAILED
    assert "runs past VIDEO_MAX_SECONDS (5 s)" in document.error
    assert "Nothing was kept" in document.error
    assert not document.video
    assert leftovers() == before
    assert not list(Path(settings.MEDIA_ROOT).rglob("*.mp4"))


def test_an_encoding_past_its_bound_fails_the_video_and_keeps_no_file(
    fake_openai, settings, owner, notebook, studio_sources
):
    settings.VIDEO_RENDER_SECONDS = 0.05
    fake_openai.chat_replies.append(reply(DECK))
    before = leftovers()

    document = make_video(owner, notebook)

    assert document.status == GeneratedDocument.Status.FAILED
    assert "Rendering the video took longer than 0.05 s" in document.error
    assert not document.video
    assert leftovers() == before
    assert not list(Path(settings.MEDIA_ROOT).rglob("*.mp4"))


@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng is not installed")
def test_offline_the_sources_sections_are_narrated_by_the_local_voice(
    fake_openai, settings, owner, notebook, studio_sources
):
    settings.CHAT_MODEL = ""
    settings.TTS_MODEL = ""

    document = make_video(owner, notebook, "brief")

    assert document.status == GeneratedDocument.Status.READY, document.error
    assert document.mode == GeneratedDocument.Mode.EXTRACTIVE
    assert not fake_openai.chat_requests
    assert all(slide["notes"] for slide in document.data["slides"])
    streams, seconds = probe(document.video.path)
    assert len(streams) == 2 and seconds > 5


@pytest.mark.django_db(transaction=True)
def test_generate_video_brief_json_names_the_mp4(
    fake_openai, capsys, owner, notebook, studio_sources
):
    fake_openai.chat_replies.append(reply({**DECK, "slides": DECK["slides"][:3]}))

    call_command(
        "generate",
        "--user", "owner", "--notebook", "Research", "--kind", "video", "--format", "brief",
        "--json",
    )  # fmt: skip

    result = json.loads(capsys.readouterr().out)
    assert result["status"] == "ready", result["error"]
    assert result["format"] == "brief"
    assert result["mp4"].endswith(".mp4")
    streams, seconds = probe(result["mp4"])
    assert len(streams) == 2 and seconds == pytest.approx(result["seconds"], abs=0.5)
