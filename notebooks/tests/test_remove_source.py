"""Removing a source from a notebook: it leaves this notebook only, stays in the library and
in other notebooks, and its old citations say "source removed"."""

from django.urls import reverse

from library.models import Source
from notebooks.models import Notebook, NotebookSource
from notebooks.tests.factories import make_cited_answer, make_source


def test_removing_a_source_unlinks_it_and_keeps_it_in_the_library(client, owner, notebook):
    source = make_source(owner=owner, notebook=notebook)
    other = Notebook.objects.create(owner=owner, title="Other")
    NotebookSource.objects.create(notebook=other, source=source)
    client.force_login(owner)

    response = client.post(
        reverse("notebooks:remove_source", args=[notebook.pk, source.pk]),
        headers={"HX-Request": "true"},
    )

    assert response.status_code == 200
    assert "was removed from this notebook" in response.text
    assert "Field notes" not in response.text.split('id="upload-notes"')[0]
    assert not NotebookSource.objects.filter(notebook=notebook, source=source).exists()
    assert NotebookSource.objects.filter(notebook=other, source=source).exists()
    assert Source.objects.filter(pk=source.pk).exists()


def test_without_javascript_removing_redirects_with_a_message(client, owner, notebook):
    source = make_source(owner=owner, notebook=notebook)
    client.force_login(owner)

    response = client.post(
        reverse("notebooks:remove_source", args=[notebook.pk, source.pk]), follow=True
    )

    assert response.redirect_chain[-1][0] == reverse("notebooks:detail", args=[notebook.pk])
    assert "was removed from this notebook" in response.text


def test_a_citation_into_a_removed_source_says_so(client, owner, notebook):
    source = make_source(owner=owner, notebook=notebook)
    cited = make_cited_answer(notebook=notebook, source=source)
    client.force_login(owner)
    client.post(reverse("notebooks:remove_source", args=[notebook.pk, source.pk]))

    response = client.get(reverse("notebooks:citation", args=[notebook.pk, cited.pk]))

    assert "Source removed" in response.text


def test_an_outsider_gets_404_and_nothing_is_removed(client, owner, outsider, notebook):
    source = make_source(owner=owner, notebook=notebook)
    client.force_login(outsider)

    response = client.post(reverse("notebooks:remove_source", args=[notebook.pk, source.pk]))

    assert response.status_code == 404
    assert NotebookSource.objects.filter(notebook=notebook, source=source).exists()


def test_a_source_of_another_notebook_cannot_be_removed_through_this_one(client, owner, notebook):
    other = Notebook.objects.create(owner=owner, title="Other")
    source = make_source(owner=owner, notebook=other)
    client.force_login(owner)

    response = client.post(reverse("notebooks:remove_source", args=[notebook.pk, source.pk]))

    assert response.status_code == 404
    assert NotebookSource.objects.filter(notebook=other, source=source).exists()


def test_removing_needs_a_post(client, owner, notebook):
    source = make_source(owner=owner, notebook=notebook)
    client.force_login(owner)

    response = client.get(reverse("notebooks:remove_source", args=[notebook.pk, source.pk]))

    assert response.status_code == 405


def test_generated_documents_are_not_listed_or_removed_among_the_sources(client, owner, notebook):
    upload = make_source(owner=owner, notebook=notebook, title="Field notes")
    generated = make_source(owner=owner, notebook=notebook, title="Study report")
    Source.objects.filter(pk=generated.pk).update(kind=Source.Kind.GENERATED)
    client.force_login(owner)

    listed = client.get(reverse("notebooks:sources", args=[notebook.pk]))
    assert upload.title in listed.text
    assert "Study report" not in listed.text

    # Its life is the studio's: removing it here would leave the studio pointing at nothing.
    response = client.post(reverse("notebooks:remove_source", args=[notebook.pk, generated.pk]))
    assert response.status_code == 404
    assert NotebookSource.objects.filter(notebook=notebook, source=generated).exists()
