"""Web sources fetched from a real HTTP server on 127.0.0.1.

That server is itself a forbidden target, so the tests that read from it switch on
URL_ALLOW_LOOPBACK; the others show that without the setting nothing reaches it. No test
sends a packet to any address but loopback.
"""

import socket
import time

import pytest
from django.utils import translation

import ingest.fetch
from ingest.fetch import FetchError, fetch
from ingest.services import add_url, process_source
from ingest.tests.web_site import PAGE
from ingest.url_guard import UrlRefused
from library.models import Chunk, Source
from texts import shown


@pytest.fixture
def connections(monkeypatch):
    """Every address the fetcher opens a socket to."""
    opened = []
    real = socket.create_connection

    def record(address, *args, **kwargs):
        opened.append(address[0])
        return real(address, *args, **kwargs)

    monkeypatch.setattr(ingest.fetch.socket, "create_connection", record)
    return opened


def process_url(owner, notebook, url) -> Source:
    source = add_url(owner=owner, notebook=notebook, url=url).source
    process_source(source_id=source.pk)
    source.refresh_from_db()
    return source


def test_a_web_page_becomes_a_ready_source_named_by_its_title(
    fake_openai, loopback_allowed, web, owner, notebook
):
    source = process_url(owner, notebook, f"{web.base}/page.html")

    assert source.status == Source.Status.READY, source.error
    assert source.kind == Source.Kind.URL
    assert source.title == "Herons of the Pond"
    assert source.url == f"{web.base}/page.html"
    assert source.reader == "web page (trafilatura)"
    assert source.page_count is None
    assert source.file.read() == PAGE
    assert source.size_bytes == len(PAGE)
    chunks = list(source.chunks.all())
    assert source.chunk_count == len(chunks) > 1
    text = " ".join(chunk.text for chunk in chunks)
    assert "heronries" in text
    assert "Privacy policy" not in text and "About us" not in text
    assert {chunk.page for chunk in chunks} == {None}


def test_a_redirect_to_another_local_path_is_followed(
    fake_openai, loopback_allowed, web, owner, notebook
):
    source = process_url(owner, notebook, f"{web.base}/moved")

    assert source.status == Source.Status.READY, source.error
    assert source.title == "Herons of the Pond"
    assert [path for path, _host in web.seen] == ["/moved", "/page.html"]


def test_a_pdf_url_goes_through_the_pdf_loader(fake_openai, loopback_allowed, web, owner, notebook):
    source = process_url(owner, notebook, f"{web.base}/report")

    assert source.status == Source.Status.READY, source.error
    assert source.page_count == 4
    assert set(source.chunks.values_list("page", flat=True)) == {1, 2, 3, 4}
    assert source.filename.endswith(".pdf")
    assert "PDF" in source.reader
    # Its metadata has no title: it keeps the address it was added by.
    assert source.title == f"{web.base}/report"


def test_a_text_url_is_read_as_text(fake_openai, loopback_allowed, web, owner, notebook):
    source = process_url(owner, notebook, f"{web.base}/notes.txt")

    assert source.status == Source.Status.READY, source.error
    assert "caught a fish" in source.chunks.get().text


def test_a_redirect_loop_fails_with_a_readable_error(loopback_allowed, web, owner, notebook):
    source = process_url(owner, notebook, f"{web.base}/loop")

    assert source.status == Source.Status.FAILED
    assert "redirects more than 5 times" in source.error
    assert len(web.seen) == 6  # the first request and five redirects, then it stops


def test_a_body_over_the_size_cap_fails_without_reading_it_all(
    loopback_allowed, web, owner, notebook, settings
):
    settings.URL_MAX_BYTES = 100_000

    source = process_url(owner, notebook, f"{web.base}/huge")

    assert source.status == Source.Status.FAILED
    assert "larger than" in source.error and "URL_MAX_BYTES" in source.error
    assert not source.file


def test_a_declared_length_over_the_cap_fails_before_the_body_is_read(
    loopback_allowed, web, settings
):
    settings.URL_MAX_BYTES = 1000

    with pytest.raises(FetchError, match="larger than 1000 bytes"):
        fetch(f"{web.base}/page.html")


def test_a_slow_body_fails_at_the_time_cap(loopback_allowed, web, owner, notebook, settings):
    settings.URL_TIMEOUT_SECONDS = 1.0
    started = time.monotonic()

    source = process_url(owner, notebook, f"{web.base}/slow")

    assert time.monotonic() - started < 3
    assert source.status == Source.Status.FAILED
    assert "took longer than 1 seconds" in source.error


def test_a_missing_page_fails_saying_so(loopback_allowed, web, owner, notebook):
    source = process_url(owner, notebook, f"{web.base}/gone")

    assert source.status == Source.Status.FAILED
    assert "HTTP 404" in source.error
    assert "does not exist" in source.error
    with translation.override("de"):
        german = shown(source.error, source.error_i18n)
    assert "Die Seite gibt es nicht." in german and "HTTP 404" in german


def test_a_page_without_main_text_fails_with_the_loaders_reason(
    fake_openai, loopback_allowed, web, owner, notebook
):
    source = process_url(owner, notebook, f"{web.base}/empty.html")

    assert source.status == Source.Status.FAILED
    assert "No main text was found" in source.error
    assert fake_openai.requests == []


def test_an_unreadable_content_type_fails_naming_it(loopback_allowed, web, owner, notebook):
    source = process_url(owner, notebook, f"{web.base}/photo.png")

    assert source.status == Source.Status.FAILED
    assert "image/png" in source.error


def test_without_loopback_allowed_the_local_server_is_refused(
    web, owner, notebook, settings, connections
):
    settings.URL_ALLOW_LOOPBACK = False

    source = process_url(owner, notebook, f"{web.base}/page.html")

    assert source.status == Source.Status.FAILED
    assert "Loupe does not fetch 127.0.0.1" in source.error
    assert "loopback" in source.error
    assert connections == []
    assert web.seen == []


def test_a_redirect_to_a_private_address_is_refused_without_connecting(
    loopback_allowed, web, owner, notebook, connections
):
    source = process_url(owner, notebook, f"{web.base}/to-private")

    assert source.status == Source.Status.FAILED
    assert "Loupe does not fetch 10.0.0.1" in source.error
    assert "private" in source.error
    assert connections == ["127.0.0.1"]


def test_a_redirect_to_another_scheme_is_refused(loopback_allowed, web, connections):
    with pytest.raises(UrlRefused, match="only http:// and https://"):
        fetch(f"{web.base}/to-ftp")

    assert connections == ["127.0.0.1"]


def test_the_connection_is_pinned_to_the_checked_address(
    loopback_allowed, web, monkeypatch, connections
):
    """DNS rebinding: the name resolves to an allowed address for the check and to a private
    one right after. The fetcher must connect to the checked address and never ask again."""
    port = web.server_address[1]
    answers = iter(["127.0.0.1", "10.0.0.1", "10.0.0.1"])
    lookups = []
    real_getaddrinfo = socket.getaddrinfo

    def rebinding_getaddrinfo(host, *args, **kwargs):
        if host != "pages.example":
            return real_getaddrinfo(host, *args, **kwargs)
        lookups.append(host)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (next(answers), port))]

    monkeypatch.setattr(socket, "getaddrinfo", rebinding_getaddrinfo)

    fetched = fetch(f"http://pages.example:{port}/page.html")

    assert fetched.content == PAGE
    assert (fetched.url, fetched.content_type, fetched.charset) == (
        f"http://pages.example:{port}/page.html",
        "text/html",
        "utf-8",
    )
    assert lookups == ["pages.example"]
    assert connections == ["127.0.0.1"]
    assert web.seen == [("/page.html", f"pages.example:{port}")]


def test_fetch_reports_the_final_url_after_redirects(loopback_allowed, web):
    fetched = fetch(f"{web.base}/moved")

    assert fetched.url == f"{web.base}/page.html"
    assert fetched.content == PAGE


def test_a_failed_web_source_added_again_is_fetched_again(
    fake_openai, web, owner, notebook, settings
):
    settings.URL_ALLOW_LOOPBACK = False
    failed = process_url(owner, notebook, f"{web.base}/page.html")
    assert failed.status == Source.Status.FAILED

    settings.URL_ALLOW_LOOPBACK = True
    again = process_url(owner, notebook, f"{web.base}/page.html")

    assert again.pk == failed.pk
    assert again.status == Source.Status.READY, again.error
    assert Chunk.objects.filter(source=again).count() == again.chunk_count > 0
