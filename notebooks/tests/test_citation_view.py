from django.urls import reverse

from notebooks.models import NotebookSource
from notebooks.tests.factories import make_cited_answer, make_source


def _open(client, notebook, cited):
    url = reverse("notebooks:citation", args=[notebook.pk, cited.pk])
    return client.get(url, headers={"HX-Request": "true"})


def test_citation_panel_shows_quote_page_and_similarity(client, owner, notebook):
    cited = make_cited_answer(notebook=notebook, source=make_source(owner=owner, notebook=notebook))
    client.force_login(owner)

    response = _open(client, notebook, cited)

    assert response.status_code == 200
    assert "Sea otters hold hands while they sleep." in response.text
    assert "Field notes" in response.text
    assert "<dd>4</dd>" in response.text
    assert "0.812" in response.text
    assert "<html" not in response.text


def test_citation_shows_source_removed_after_unlinking(client, owner, notebook):
    source = make_source(owner=owner, notebook=notebook)
    cited = make_cited_answer(notebook=notebook, source=source)
    NotebookSource.objects.filter(notebook=notebook, source=source).delete()
    client.force_login(owner)

    response = _open(client, notebook, cited)

    assert "Source removed" in response.text
    assert "Sea otters hold hands" not in response.text


def test_citation_shows_source_removed_after_deleting_the_source(client, owner, notebook):
    source = make_source(owner=owner, notebook=notebook)
    cited = make_cited_answer(notebook=notebook, source=source)
    source.delete()
    client.force_login(owner)

    response = _open(client, notebook, cited)

    assert "Source removed" in response.text
    assert "Sea otters hold hands" not in response.text


def test_citation_without_htmx_is_a_full_page(client, owner, notebook):
    cited = make_cited_answer(notebook=notebook, source=make_source(owner=owner, notebook=notebook))
    client.force_login(owner)

    response = client.get(reverse("notebooks:citation", args=[notebook.pk, cited.pk]))

    assert "<html" in response.text
    assert "Sea otters hold hands while they sleep." in response.text
