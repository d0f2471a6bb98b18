"""Text with a byte-order mark is text, whatever else its first bytes could be: UTF-16 from
Windows ("Unicode" .txt, Excel's "Unicode text") starts FF FE, which reads as an MPEG audio
frame header. And a file that does fail says so without naming where the server keeps it."""

from __future__ import annotations

import codecs

import pytest
from django.core.files.base import ContentFile

from ingest.loaders import detect_kind
from ingest.services import add_source, process_source
from library.models import Source
from texts.errors import without_server_paths

WORDS = "Grüße aus Köln: the heron waits at the edge of the pond.\r\nZweite Zeile.\r\n"
ENCODED = {
    "utf-16 little-endian": codecs.BOM_UTF16_LE + WORDS.encode("utf-16-le"),
    "utf-16 big-endian": codecs.BOM_UTF16_BE + WORDS.encode("utf-16-be"),
    "utf-8 with a BOM": codecs.BOM_UTF8 + WORDS.encode(),
}


@pytest.mark.parametrize("data", ENCODED.values(), ids=ENCODED.keys())
def test_a_file_with_a_byte_order_mark_is_text_whatever_its_name(data):
    assert detect_kind("Tabelle.txt", data[:2048]) == "text"
    assert detect_kind("export", data[:2048]) == "text"


@pytest.mark.parametrize("data", ENCODED.values(), ids=ENCODED.keys())
def test_windows_unicode_text_is_read_as_its_words(fake_openai, owner, notebook, data):
    source = add_source(
        owner=owner, notebook=notebook, upload=ContentFile(data, name="Unicode.txt")
    ).source

    source = process_source(source_id=source.pk)

    assert (source.kind, source.status, source.error) == ("text", Source.Status.READY, "")
    assert source.chunks.get().text.startswith("Grüße aus Köln: the heron waits")


def test_a_recording_that_cannot_be_read_names_no_server_path(fake_openai, owner, notebook):
    # An MPEG frame header, then nothing a decoder can use.
    data = b"\xff\xfb\x90\x64" + b"\x13\x37" * 400
    source = add_source(
        owner=owner, notebook=notebook, upload=ContentFile(data, name="voice.mp3")
    ).source

    source = process_source(source_id=source.pk)

    assert source.status == Source.Status.FAILED
    assert source.error
    assert "/" not in str(source.error), source.error


def test_paths_lose_their_folders_and_addresses_keep_theirs():
    message = (
        "/srv/loupe/var/uploads/sources/a.mp3: Invalid data; "
        "[Errno 2] No such file: '/tmp/loupe-x/b.txt'; see https://example.org/docs/a"
    )

    assert without_server_paths(message) == (
        "a.mp3: Invalid data; [Errno 2] No such file: 'b.txt'; see https://example.org/docs/a"
    )
