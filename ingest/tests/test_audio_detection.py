"""Recordings are recognised by their first bytes, whatever their name says."""

import pytest

from ingest.loaders import detect_kind
from ingest.loaders.audio import container

HEADS = {
    "mp3 with an ID3 tag": (b"ID3\x04\x00\x00\x00\x00\x00\x00", "mp3"),
    "mp3 frame, MPEG-1 layer III": (b"\xff\xfb\x90\x64\x00", "mp3"),
    "mp3 frame, MPEG-2 layer III": (b"\xff\xf3\x48\xc4\x00", "mp3"),
    "wav": (b"RIFF\x24\x08\x00\x00WAVEfmt ", "wav"),
    "m4a": (b"\x00\x00\x00\x20ftypM4A \x00\x00\x00\x00", "mp4"),
    "mp4": (b"\x00\x00\x00\x18ftypisom\x00\x00\x02\x00", "mp4"),
    "aac adts": (b"\xff\xf1\x50\x80\x02\x1f\xfc", "aac"),
    "ogg": (b"OggS\x00\x02\x00\x00\x00\x00", "ogg"),
    "flac": (b"fLaC\x00\x00\x00\x22", "flac"),
    "webm": (b"\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01", "webm"),
}


@pytest.mark.parametrize("head, expected", HEADS.values(), ids=HEADS.keys())
def test_each_audio_container_is_recognised_by_its_bytes(head, expected):
    assert container(head) == expected
    assert detect_kind("upload.bin", head + b"\x00" * 64) == "audio"


def test_a_misnamed_recording_is_still_audio():
    assert detect_kind("notes.txt", b"OggS\x00\x02" + b"\x00" * 64) == "audio"


def test_still_images_in_an_mp4_box_are_not_audio():
    assert container(b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00") is None
    assert container(b"\x00\x00\x00\x1cftypavif\x00\x00\x00\x00") is None


def test_jpeg_and_text_are_not_audio():
    assert container(b"\xff\xd8\xff\xe0\x00\x10JFIF") is None
    assert container(b"Hello, world") is None
