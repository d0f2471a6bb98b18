"""Hostile files and pages go through the real path (add_source or add_url, then
process_source) and fail the source with a reason, in bounded time and memory."""

from __future__ import annotations

import contextlib
import resource
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.core.files.base import ContentFile

from ingest.chunker import MAX_CHUNK_CHARS, chunk_passages
from ingest.passages import Passage
from ingest.services import UploadRejected, add_source, add_url, process_source
from ingest.tests import hostile
from ingest.tests.data import FORMATS, PDFS
from library.models import Chunk, Source

# Generous for a shared CI machine; a parser that loops or a bomb that unpacks takes far more.
SECONDS = 20
# Growth of the test process's peak memory that a hostile file may cause.
MEGABYTES = 300


def peak_megabytes() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@contextlib.contextmanager
def bounded(seconds: float = SECONDS, megabytes: float = MEGABYTES) -> Iterator[None]:
    started, peak = time.monotonic(), peak_megabytes()
    yield
    assert time.monotonic() - started < seconds
    assert peak_megabytes() - peak < megabytes


def processed(notebook, content: bytes, name: str, **options) -> Source:
    added = add_source(
        owner=notebook.owner, notebook=notebook, upload=ContentFile(content, name=name), **options
    )
    return process_source(source_id=added.source.pk)


@pytest.mark.parametrize(
    ("name", "content", "reason"),
    [
        ("pages.pdf", lambda: hostile.million_page_refs(100_000), "100000 pages"),
        ("refs.pdf", lambda: hostile.million_page_refs(), "1000000 pages"),
        # PDFium finds the one page under 5000 levels of page tree, but not its font.
        ("tree.pdf", hostile.nested_page_tree, "No text could be read"),
    ],
)
def test_a_pdf_with_a_hostile_page_list_fails_with_a_reason(
    fake_openai, notebook, name, content, reason
):
    with bounded():
        source = processed(notebook, content(), name)

    assert source.status == Source.Status.FAILED
    assert reason in source.error
    assert not Chunk.objects.filter(source=source).exists()


@pytest.mark.parametrize(
    ("name", "content"),
    [("nested.pdf", hostile.deeply_nested), ("loop.pdf", hostile.page_tree_loop)],
)
def test_a_pdf_with_junk_around_its_one_page_is_read_for_that_page(
    fake_openai, notebook, name, content
):
    with bounded():
        source = processed(notebook, content(), name)

    assert source.status == Source.Status.READY, source.error
    assert [chunk.page for chunk in Chunk.objects.filter(source=source)] == [1]


def test_a_pdf_that_declares_millions_of_pages_is_read_for_the_pages_it_has(fake_openai, notebook):
    with bounded():
        source = processed(notebook, hostile.millions_of_pages(), "claims.pdf")

    assert source.status == Source.Status.READY


def test_a_page_the_size_of_a_wall_is_rendered_within_the_pixel_cap(fake_openai, notebook):
    with bounded():
        source = processed(notebook, hostile.giant_page(), "wall.pdf", pdf_capture="vision")

    # The local OCR finds no words on the downscaled blank page; what matters is the bound.
    assert source.status == Source.Status.FAILED
    assert "No text could be read" in source.error


def test_an_image_decompression_bomb_fails_naming_the_pixel_cap(fake_openai, notebook):
    bomb = hostile.png_bomb()
    assert len(bomb) < 1000  # ten gigapixels declared in a few hundred bytes

    with bounded():
        source = processed(notebook, bomb, "bomb.png")

    assert source.status == Source.Status.FAILED
    assert "IMAGE_MAX_PIXELS" in source.error
    assert not fake_openai.vision_requests


def test_a_zero_byte_file_is_refused_saying_it_is_empty(notebook):
    with pytest.raises(UploadRejected, match="empty.pdf is empty"):
        add_source(owner=notebook.owner, notebook=notebook, upload=ContentFile(b"", "empty.pdf"))

    assert not Source.objects.exists()


def test_a_truncated_pdf_fails_with_a_reason(fake_openai, notebook):
    whole = (PDFS / "sample-files/pdflatex-4-pages.pdf").read_bytes()

    with bounded():
        source = processed(notebook, whole[: len(whole) // 3], "cut.pdf", pdf_capture="text")

    assert source.status == Source.Status.FAILED
    assert source.error


def test_binary_bytes_named_pdf_are_refused_naming_what_loupe_reads(notebook):
    noise = bytes(range(256)) * 64

    with pytest.raises(UploadRejected, match="not a file Loupe can read"):
        add_source(owner=notebook.owner, notebook=notebook, upload=ContentFile(noise, "x.pdf"))


def test_text_named_pdf_is_read_as_the_text_it_is(fake_openai, notebook):
    source = processed(notebook, b"Herons wait at the edge of the pond.", "notes.pdf")

    assert source.status == Source.Status.READY
    assert source.kind == Source.Kind.TEXT


def test_an_enormous_single_line_of_words_is_read_in_bounded_time(fake_openai, notebook, settings):
    settings.EMBEDDING_BATCH_SIZE = 256
    line = b" ".join(b"heron%d" % (n % 500) for n in range(300_000))  # 2.6 MB, no newline

    with bounded(seconds=60):
        source = processed(notebook, line, "line.txt")

    assert source.status == Source.Status.READY
    assert source.chunk_count == Chunk.objects.filter(source=source).count() > 700


def test_one_enormous_word_is_cut_into_chunks_of_bounded_size(fake_openai, notebook):
    with bounded():
        source = processed(notebook, b"a" * 5_000_000, "word.txt")

    assert source.status == Source.Status.READY
    longest = max(len(chunk.text) for chunk in Chunk.objects.filter(source=source))
    assert longest <= MAX_CHUNK_CHARS


def test_words_padded_with_megabytes_of_whitespace_make_chunks_of_bounded_size(
    fake_openai, notebook
):
    padded = b"heron" + b" " * 3_000_000 + b"pond" + b"\t" * 3_000_000 + b"fish"

    with bounded():
        source = processed(notebook, padded, "padded.txt")

    assert source.status == Source.Status.READY
    texts = [chunk.text for chunk in Chunk.objects.filter(source=source).order_by("ordinal")]
    assert texts == ["heron", "pond", "fish"]


def test_the_chunker_cuts_a_run_of_letters_into_tokens_of_bounded_length():
    [only] = chunk_passages([Passage(text="x" * 250, page=None)], window=420, overlap=50)
    drafts = chunk_passages([Passage(text="x" * 1000, page=None)], window=4, overlap=1)

    assert only.text == "x" * 250  # three tokens, one chunk, nothing lost
    assert [(d.char_start, d.char_end) for d in drafts] == [(0, 400), (300, 700), (600, 1000)]


def test_audio_that_ffmpeg_rejects_fails_the_source(fake_openai, notebook):
    with bounded():
        source = processed(notebook, b"OggS" + b"\x00garbage" * 1000, "talk.ogg")

    assert source.status == Source.Status.FAILED
    assert "could not be read as a recording" in source.error
    assert not fake_openai.transcription_requests


class _EndlessSite(BaseHTTPRequestHandler):
    """An HTML page that never ends: fast (size cap) or a trickle (time cap)."""

    sent: list[int]

    def log_message(self, format, *args):
        pass

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        if self.path == "/declared":
            self.send_header("Content-Length", str(100 * 1024 * 1024))
        self.end_headers()
        piece = b"<p>" + b"heron " * 1000 + b"</p>"
        with contextlib.suppress(OSError):
            self.wfile.write(b"<html><body>")
            while True:
                self.wfile.write(piece)
                self.sent.append(len(piece))
                if self.path == "/trickle":
                    time.sleep(0.05)


@pytest.fixture
def endless(settings):
    settings.URL_ALLOW_LOOPBACK = True
    sent: list[int] = []
    handler = type("Handler", (_EndlessSite,), {"sent": sent})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", sent
    finally:
        server.shutdown()
        server.server_close()


def processed_url(notebook, url: str) -> Source:
    added = add_url(owner=notebook.owner, notebook=notebook, url=url)
    return process_source(source_id=added.source.pk)


def test_a_never_ending_page_stops_at_the_size_cap(fake_openai, notebook, endless, settings):
    base, sent = endless
    settings.URL_MAX_BYTES = 5 * 1024 * 1024

    with bounded():
        source = processed_url(notebook, f"{base}/fast")

    assert source.status == Source.Status.FAILED
    assert "URL_MAX_BYTES" in source.error
    assert sum(sent) < 50 * 1024 * 1024  # it stopped reading, the server stopped writing


def test_a_page_declaring_100_mib_fails_before_its_body_is_read(
    fake_openai, notebook, endless, settings
):
    base, sent = endless

    with bounded(seconds=10):
        source = processed_url(notebook, f"{base}/declared")

    assert source.status == Source.Status.FAILED
    assert "URL_MAX_BYTES" in source.error


def test_a_never_ending_trickle_stops_at_the_time_cap(fake_openai, notebook, endless, settings):
    base, _ = endless
    settings.URL_TIMEOUT_SECONDS = 2.0

    with bounded(seconds=6):
        source = processed_url(notebook, f"{base}/trickle")

    assert source.status == Source.Status.FAILED
    assert "URL_TIMEOUT_SECONDS" in source.error


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("testWORD_protected_passtika.docx", "password-protected"),
        ("testWORD_truncated.docx", "damaged"),
        ("Divino_Revelado.pptx", "damaged"),
        ("poc-xmlbomb.xlsx", "declares XML entities"),
        ("type_excel.ods", "Office 97-2003"),
        ("testODTnotaZipFile.odt", "not a format Loupe reads"),
    ],
)
def test_a_bad_office_file_fails_its_source_with_a_reason(fake_openai, notebook, name, reason):
    content = (FORMATS / "odd" / name).read_bytes()

    with bounded():
        source = processed(notebook, content, name)

    assert source.status == Source.Status.FAILED
    assert reason in source.error
    assert not Chunk.objects.filter(source=source).exists()
