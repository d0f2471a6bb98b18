"""A PDF source's pages as PNG through the API, a citation's quote highlighted: the same
picture as the passage panel's (ingest/page_images.py), under the same rules."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from ingest.tests.data import PDFS
from notebooks.models import Notebook
from notebooks.tests.pdf_citations import add_pdf, cite_pdf

FOUR_PAGES = PDFS / "sample-files" / "pdflatex-4-pages.pdf"
QUOTE = "Hello, here is some text without a meaning."


@pytest.fixture
def pdf(fake_openai, add_ready_source, notebook):
    return add_pdf(add_ready_source, notebook, FOUR_PAGES)


def _page(notebook, source, page) -> str:
    return f"/api/v1/notebooks/{notebook.pk}/sources/{source.pk}/pages/{page}"


def test_a_page_is_a_png_and_a_citation_highlights_its_quote(api, notebook, pdf):
    cited = cite_pdf(notebook=notebook, source=pdf, quote=QUOTE)

    plain = api.get(_page(notebook, pdf, cited.page))
    highlighted = api.get(_page(notebook, pdf, cited.page), {"citation": cited.pk})

    assert plain.status_code == 200 and plain["Content-Type"] == "image/png"
    assert Image.open(io.BytesIO(plain.content)).size == (993, 1404)  # A4 at 120 dpi
    assert highlighted.status_code == 200 and highlighted.content != plain.content


def test_a_missing_page_another_notebooks_citation_and_a_text_source_are_404(
    api, owner, notebook, pdf, add_ready_source
):
    other = Notebook.objects.create(owner=owner, title="Other")
    elsewhere = cite_pdf(notebook=other, source=pdf, quote=QUOTE)
    text = add_ready_source(notebook, b"Grey herons wait motionless.", "herons.txt")

    missing = api.get(_page(notebook, pdf, 5))
    foreign = api.get(_page(notebook, pdf, 1), {"citation": elsewhere.pk})
    not_a_pdf = api.get(_page(notebook, text, 1))
    bad = api.get(_page(notebook, pdf, 1), {"citation": "one"})

    assert missing.status_code == 404 and missing.json()["code"] == "not_found"
    assert foreign.status_code == 404
    assert not_a_pdf.status_code == 404
    assert bad.status_code == 422 and bad.json()["field"] == "query.citation"


def test_an_outsider_gets_404(client, outsider, notebook, pdf):
    from api.tests.conftest import TokenClient
    from api.tokens import create_token

    theirs = TokenClient(client, create_token(user=outsider, name="x", scope="read").secret)

    assert theirs.get(_page(notebook, pdf, 1)).status_code == 404
