"""Adding a library source to a notebook named by anything but its id is refused with 400
naming the field; choosing no notebook still says to choose one."""

from __future__ import annotations

from django.urls import reverse

from notebooks.models import Notebook, NotebookSource
from notebooks.tests.factories import make_source


def test_a_notebook_named_by_words_is_refused_and_nothing_linked(client, owner, notebook):
    source = make_source(owner=owner, notebook=notebook, title="Field notes")
    Notebook.objects.create(owner=owner, title="Second")
    client.force_login(owner)
    url = reverse("library:add_to_notebook", args=[source.pk])

    response = client.post(url, {"notebook": "Second"})

    assert response.status_code == 400
    assert "notebook: Enter a whole number" in response.text
    assert NotebookSource.objects.filter(source=source).count() == 1


def test_choosing_no_notebook_says_to_choose_one(client, owner, notebook):
    source = make_source(owner=owner, notebook=notebook, title="Field notes")
    client.force_login(owner)

    response = client.post(
        reverse("library:add_to_notebook", args=[source.pk]), {"notebook": ""}, follow=True
    )

    assert response.status_code == 200
    assert "Choose a notebook to add" in response.text
