import io

import pytest
from django.urls import reverse
from PIL import Image

from ingest.tests.data import PDFS
from notebooks.models import Notebook, NotebookSource
from notebooks.tests.factories import make_source
from notebooks.tests.pdf_citations import add_pdf, cite_pdf

FOUR_PAGES = PDFS / "sample-files" / "pdflatex-4-pages.pdf"
QUOTE = "Hello, here is some text without a meaning."


@pytest.fixture
def pdf(fake_openai, add_ready_source, notebook):
    return add_pdf(add_ready_source, notebook, FOUR_PAGES)


def _image(notebook, source, page, **query):
    url = reverse("notebooks:page_image", args=[notebook.pk, source.pk, page])
    return url + "".join(f"?{key}={value}" for key, value in query.items())


def test_page_image_is_a_png_of_the_page_at_120_dpi(client, owner, notebook, pdf):
    client.force_login(owner)

    response = client.get(_image(notebook, pdf, 2))

    assert response.status_code == 200
    assert response["Content-Type"] == "image/png"
    assert "private" in response["Cache-Control"]
    image = Image.open(io.BytesIO(response.content))
    assert image.size == (993, 1404)  # A4, 595 × 842 points, at 120 dpi


def test_page_image_with_a_citation_highlights_its_quote(client, owner, notebook, pdf):
    cited = cite_pdf(notebook=notebook, source=pdf, quote=QUOTE)
    client.force_login(owner)

    plain = client.get(_image(notebook, pdf, cited.page))
    highlighted = client.get(_image(notebook, pdf, cited.page, citation=cited.pk))

    assert highlighted.status_code == 200
    assert highlighted.content != plain.content


def test_page_image_of_another_page_than_the_cited_one_has_no_highlight(
    client, owner, notebook, pdf
):
    cited = cite_pdf(notebook=notebook, source=pdf, quote=QUOTE)
    other_page = 2 if cited.page != 2 else 3
    client.force_login(owner)

    plain = client.get(_image(notebook, pdf, other_page))
    with_citation = client.get(_image(notebook, pdf, other_page, citation=cited.pk))

    assert with_citation.content == plain.content


def test_a_quote_not_on_the_page_renders_the_page_without_highlights(client, owner, notebook, pdf):
    cited = cite_pdf(notebook=notebook, source=pdf, quote=QUOTE)
    cited.quote = "Words that appear nowhere in this document, not even once."
    cited.save()
    client.force_login(owner)

    plain = client.get(_image(notebook, pdf, cited.page))
    response = client.get(_image(notebook, pdf, cited.page, citation=cited.pk))

    assert response.status_code == 200
    assert response.content == plain.content


@pytest.mark.parametrize("page", [0, 5, 99])
def test_a_page_out_of_range_is_404(client, owner, notebook, pdf, page):
    client.force_login(owner)
    assert client.get(_image(notebook, pdf, page)).status_code == 404


def test_a_citation_of_another_notebook_is_404(client, owner, notebook, pdf):
    other = Notebook.objects.create(owner=owner, title="Other")
    NotebookSource.objects.create(notebook=other, source=pdf)
    elsewhere = cite_pdf(notebook=other, source=pdf, quote=QUOTE)
    client.force_login(owner)

    response = client.get(_image(notebook, pdf, elsewhere.page, citation=elsewhere.pk))

    assert response.status_code == 404


def test_a_citation_id_that_is_not_a_number_is_404(client, owner, notebook, pdf):
    client.force_login(owner)
    assert client.get(_image(notebook, pdf, 1, citation="x")).status_code == 404


def test_a_source_removed_from_the_notebook_is_404(client, owner, notebook, pdf):
    NotebookSource.objects.filter(notebook=notebook, source=pdf).delete()
    client.force_login(owner)
    assert client.get(_image(notebook, pdf, 1)).status_code == 404


def test_a_source_that_is_not_a_pdf_is_404(client, owner, notebook):
    text = make_source(owner=owner, notebook=notebook)
    client.force_login(owner)
    assert client.get(_image(notebook, text, 1)).status_code == 404
