"""The library page: every source of mine with its status and notebooks, and adding one to
another notebook; nobody else's sources, ever."""

from django.urls import reverse

from notebooks.models import Notebook, NotebookSource
from notebooks.tests.factories import make_source


def test_the_library_lists_my_sources_with_their_notebooks(client, owner, outsider, notebook):
    make_source(owner=owner, notebook=notebook, title="Field notes")
    theirs = Notebook.objects.create(owner=outsider, title="Theirs")
    make_source(owner=outsider, notebook=theirs, title="Secret diary")
    client.force_login(owner)

    response = client.get(reverse("library:library"))

    assert response.status_code == 200
    assert "Field notes" in response.text and "Ready" in response.text
    assert f'href="{reverse("notebooks:detail", args=[notebook.pk])}"' in response.text
    assert "Secret diary" not in response.text and "Theirs" not in response.text


def test_an_empty_library_says_what_to_do(client, owner):
    client.force_login(owner)

    response = client.get(reverse("library:library"))

    assert "Your library is empty. Create a notebook first" in response.text


def test_the_library_is_in_the_navigation(client, owner):
    client.force_login(owner)

    response = client.get(reverse("notebooks:list"))

    assert f'href="{reverse("library:library")}"' in response.text


def test_adding_a_source_to_another_notebook_links_it(client, owner, notebook):
    source = make_source(owner=owner, notebook=notebook)
    other = Notebook.objects.create(owner=owner, title="Second")
    client.force_login(owner)
    url = reverse("library:add_to_notebook", args=[source.pk])

    response = client.post(url, {"notebook": other.pk}, headers={"HX-Request": "true"})

    assert response.status_code == 200
    assert "is now in “Second”" in response.text
    assert NotebookSource.objects.filter(notebook=other, source=source).exists()
    # Nothing is read again: the source keeps its status and chunks.
    source.refresh_from_db()
    assert source.status == "ready"


def test_adding_without_javascript_redirects_with_a_message(client, owner, notebook):
    source = make_source(owner=owner, notebook=notebook)
    other = Notebook.objects.create(owner=owner, title="Second")
    client.force_login(owner)
    url = reverse("library:add_to_notebook", args=[source.pk])

    response = client.post(url, {"notebook": other.pk}, follow=True)

    assert "is now in “Second”" in response.text
    assert NotebookSource.objects.filter(notebook=other, source=source).exists()


def test_adding_without_choosing_a_notebook_says_so(client, owner, notebook):
    source = make_source(owner=owner, notebook=notebook)
    client.force_login(owner)
    url = reverse("library:add_to_notebook", args=[source.pk])

    response = client.post(url, {"notebook": ""}, headers={"HX-Request": "true"})

    assert "Choose a notebook" in response.text


def test_my_source_cannot_go_into_someone_elses_notebook(client, owner, outsider, notebook):
    source = make_source(owner=owner, notebook=notebook)
    theirs = Notebook.objects.create(owner=outsider, title="Theirs")
    client.force_login(owner)

    response = client.post(
        reverse("library:add_to_notebook", args=[source.pk]), {"notebook": theirs.pk}
    )

    assert response.status_code == 404
    assert not NotebookSource.objects.filter(notebook=theirs).exists()


def test_an_outsider_cannot_add_my_source_to_their_notebook(client, owner, outsider, notebook):
    source = make_source(owner=owner, notebook=notebook)
    theirs = Notebook.objects.create(owner=outsider, title="Theirs")
    client.force_login(outsider)

    response = client.post(
        reverse("library:add_to_notebook", args=[source.pk]), {"notebook": theirs.pk}
    )

    assert response.status_code == 404
    assert not NotebookSource.objects.filter(notebook=theirs).exists()


def test_the_library_needs_a_sign_in(client):
    response = client.get(reverse("library:library"))

    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))
