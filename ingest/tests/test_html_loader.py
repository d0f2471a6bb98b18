import pytest

from ingest.loaders import html
from ingest.passages import LoaderError
from ingest.tests.web_site import EMPTY_PAGE, PAGE


def test_a_page_gives_its_title_and_its_main_text_as_one_passage():
    page = html.extract(PAGE, charset="utf-8")

    assert page.title == "Herons of the Pond"
    [passage] = page.passages
    assert passage.page is None
    assert "heronries, high in the trees" in passage.text
    assert "About us" not in passage.text
    assert "All rights reserved" not in passage.text


def test_the_charset_from_the_server_decodes_the_page():
    body = "<p>Der Graureiher wartet am Teich, bis ein Fisch vorbeischwimmt. Größe: groß.</p>"
    latin1 = f"<html><head><title>Reiher am Weiher</title></head><body>{body}</body></html>"

    page = html.extract(latin1.encode("latin-1"), charset="iso-8859-1")

    assert page.title == "Reiher am Weiher"
    assert "Größe: groß" in page.passages[0].text


def test_an_unknown_charset_falls_back_to_detection():
    page = html.extract(PAGE, charset="no-such-charset")

    assert page.title == "Herons of the Pond"


def test_a_page_without_main_text_fails_with_a_human_message():
    with pytest.raises(LoaderError, match="No main text was found on this web page"):
        html.extract(EMPTY_PAGE)


def test_bytes_that_are_not_html_at_all_fail_without_a_traceback():
    with pytest.raises(LoaderError):
        html.extract(b"\x00\x01\x02" * 100)
