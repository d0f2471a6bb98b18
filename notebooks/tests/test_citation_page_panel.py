import pytest
from django.urls import reverse

from ingest.tests.data import PDFS
from notebooks.models import NotebookSource
from notebooks.tests.pdf_citations import add_pdf, cite_pdf

FOUR_PAGES = PDFS / "sample-files" / "pdflatex-4-pages.pdf"
QUOTE = "Hello, here is some text without a meaning."


@pytest.fixture
def pdf(fake_openai, add_ready_source, notebook):
    return add_pdf(add_ready_source, notebook, FOUR_PAGES)


def _panel(client, notebook, cited, **query):
    url = reverse("notebooks:citation", args=[notebook.pk, cited.pk])
    return client.get(url, query, headers={"HX-Request": "true"})


def _image_url(notebook, source, page):
    return reverse("notebooks:page_image", args=[notebook.pk, source.pk, page])


def test_panel_shows_the_cited_page_highlighted_with_its_neighbours(client, owner, notebook, pdf):
    cited = cite_pdf(notebook=notebook, source=pdf, quote=QUOTE)
    cited.page = 2  # the chunk's own page is 1; the second page shows both neighbours
    cited.save()
    client.force_login(owner)

    response = _panel(client, notebook, cited)

    assert f'src="{_image_url(notebook, pdf, 2)}?citation={cited.pk}"' in response.text
    assert "Page 2 of 4" in response.text
    assert "?page=1" in response.text and "Previous page" in response.text
    assert "?page=3" in response.text and "Next page" in response.text


def test_turning_the_page_shows_the_next_page_without_highlight(client, owner, notebook, pdf):
    cited = cite_pdf(notebook=notebook, source=pdf, quote=QUOTE)
    client.force_login(owner)

    response = _panel(client, notebook, cited, page=cited.page + 1)

    assert f'src="{_image_url(notebook, pdf, cited.page + 1)}"' in response.text
    assert "citation=" not in response.text
    assert f"Page {cited.page + 1} of 4" in response.text
    assert QUOTE not in response.text  # only the image area is swapped


def test_the_first_page_has_no_previous_link_and_the_last_no_next(client, owner, notebook, pdf):
    cited = cite_pdf(notebook=notebook, source=pdf, quote=QUOTE)
    client.force_login(owner)

    first = _panel(client, notebook, cited, page=1)
    last = _panel(client, notebook, cited, page=4)

    assert "Previous page" not in first.text and "Next page" in first.text
    assert "Next page" not in last.text and "Previous page" in last.text


def test_a_page_out_of_range_falls_back_to_the_cited_page(client, owner, notebook, pdf):
    cited = cite_pdf(notebook=notebook, source=pdf, quote=QUOTE)
    client.force_login(owner)

    response = _panel(client, notebook, cited, page=99)

    assert f"?citation={cited.pk}" in response.text


def test_without_htmx_turning_the_page_shows_the_whole_citation_page(client, owner, notebook, pdf):
    cited = cite_pdf(notebook=notebook, source=pdf, quote=QUOTE)
    client.force_login(owner)

    url = reverse("notebooks:citation", args=[notebook.pk, cited.pk])
    response = client.get(url, {"page": 3})

    assert "<html" in response.text
    assert f'src="{_image_url(notebook, pdf, 3)}"' in response.text


def test_a_removed_source_shows_no_page_image(client, owner, notebook, pdf):
    cited = cite_pdf(notebook=notebook, source=pdf, quote=QUOTE)
    NotebookSource.objects.filter(notebook=notebook, source=pdf).delete()
    client.force_login(owner)

    response = _panel(client, notebook, cited)

    assert "Source removed" in response.text
    assert "<img" not in response.text
    assert "page_image" not in response.text and ".png" not in response.text


def test_the_passage_reads_as_paragraphs_not_the_pages_lines(client, owner, notebook, pdf):
    # The quote runs across one of the page's line ends, as the chunk holds it.
    quote = "an impression of the look.\nThis text should contain all letters"
    cited = cite_pdf(notebook=notebook, source=pdf, quote=quote)
    client.force_login(owner)

    response = _panel(client, notebook, cited)

    assert "<mark>an impression of the look. This text should contain all letters</mark>" in (
        response.text
    )
    assert "the letters are written and an impression" in response.text
