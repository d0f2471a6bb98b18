"""The library's Delete: a source no notebook holds goes, with its file; one still in a
notebook, public, or being read stays and says why; nobody deletes another's source."""

from __future__ import annotations

from pathlib import Path

from django.urls import reverse

from library.models import Source
from notebooks.services import unlink_source

HERONS = b"Grey herons wait motionless at the edge of the pond for fish."


def delete(client, source, **headers):
    return client.post(reverse("library:delete_source", args=[source.pk]), **headers)


def test_a_source_in_no_notebook_is_deleted_with_its_file(
    client, owner, notebook, fake_openai, add_ready_source, django_capture_on_commit_callbacks
):
    source = add_ready_source(notebook, HERONS, "herons.txt")
    client.force_login(owner)
    page = client.get(reverse("library:library")).text
    assert reverse("library:delete_source", args=[source.pk]) not in page  # in a notebook

    unlink_source(notebook=notebook, source=source)
    page = client.get(reverse("library:library")).text
    assert reverse("library:delete_source", args=[source.pk]) in page
    path = Path(source.file.path)
    assert path.exists()

    with django_capture_on_commit_callbacks(execute=True):
        response = delete(client, source, HTTP_HX_REQUEST="true")

    assert response.status_code == 200 and response.text == ""
    assert not Source.objects.filter(pk=source.pk).exists()
    assert not path.exists()


def test_a_source_still_in_a_notebook_stays_and_says_why(
    client, owner, notebook, fake_openai, add_ready_source
):
    source = add_ready_source(notebook, HERONS, "herons.txt")
    client.force_login(owner)

    response = delete(client, source, HTTP_HX_REQUEST="true")

    assert "is still in a notebook: remove it there first" in response.text
    assert Source.objects.filter(pk=source.pk).exists()


def test_nobody_deletes_another_persons_source(
    client, outsider, notebook, fake_openai, add_ready_source
):
    source = add_ready_source(notebook, HERONS, "herons.txt")
    unlink_source(notebook=notebook, source=source)
    client.force_login(outsider)

    assert delete(client, source).status_code == 404
    assert Source.objects.filter(pk=source.pk).exists()
