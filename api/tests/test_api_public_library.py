"""The public library through the API: searched, published to and taken back, and its
sources added to a notebook, under sharing/access.py's rules as on the page."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission

from api.tests.conftest import TokenClient
from api.tokens import create_token
from notebooks.models import Notebook, NotebookSource


@pytest.fixture
def contributor(owner):
    owner.user_permissions.add(Permission.objects.get(codename="publish_source"))
    return owner


@pytest.fixture
def herons(fake_openai, add_ready_source, notebook):
    return add_ready_source(
        notebook, b"Grey herons wait motionless at the edge of the pond.", "herons.txt"
    )


def _as(client, user, scope="write") -> TokenClient:
    return TokenClient(client, create_token(user=user, name="t", scope=scope).secret)


def test_a_published_source_is_found_by_its_text_and_linked_by_another_reader(
    api, client, contributor, outsider, herons
):
    published = api.post("/api/v1/library/public", {"source": herons.pk})
    assert published.status_code == 201, published.content
    assert published.json()["published_by"] == contributor.get_username()

    reader = _as(client, outsider)
    found = reader.get("/api/v1/library/public", {"q": "motionless"}).json()
    assert [row["id"] for row in found] == [herons.pk]
    assert reader.get("/api/v1/library/public", {"q": "zebracorn"}).json() == []

    theirs = Notebook.objects.create(owner=outsider, title="Birds")
    linked = reader.post(f"/api/v1/notebooks/{theirs.pk}/sources/link", {"source": herons.pk})
    again = reader.post(f"/api/v1/notebooks/{theirs.pk}/sources/link", {"source": herons.pk})
    assert linked.status_code == 201 and linked.json()["created"] is True
    assert again.status_code == 200 and again.json()["created"] is False
    assert NotebookSource.objects.filter(notebook=theirs, source=herons).count() == 1

    # Taken back: the library no longer lists it, and no one can link it again.
    assert api.delete(f"/api/v1/library/public/{herons.pk}").status_code == 204
    assert reader.get("/api/v1/library/public").json() == []
    refused = reader.post(f"/api/v1/notebooks/{theirs.pk}/sources/link", {"source": herons.pk})
    assert refused.status_code == 404


def test_publishing_needs_the_right_and_ones_own_ready_source(api, client, owner, outsider, herons):
    # Without the contributor's right: 403, nothing published.
    denied = api.post("/api/v1/library/public", {"source": herons.pk})
    assert denied.status_code == 403 and denied.json()["code"] == "forbidden"

    # Someone else's private source is not theirs to see: 404, as if it did not exist.
    outsider.user_permissions.add(Permission.objects.get(codename="publish_source"))
    stranger = _as(client, outsider)
    assert stranger.post("/api/v1/library/public", {"source": herons.pk}).status_code == 404
    herons.refresh_from_db()
    assert herons.public is False

    # A private source cannot be linked into someone else's notebook.
    theirs = Notebook.objects.create(owner=outsider, title="Birds")
    link = stranger.post(f"/api/v1/notebooks/{theirs.pk}/sources/link", {"source": herons.pk})
    assert link.status_code == 404


def test_only_its_publisher_takes_a_source_back_and_a_read_token_may_not(
    api, client, contributor, outsider, herons
):
    api.post("/api/v1/library/public", {"source": herons.pk})

    other = _as(client, outsider).delete(f"/api/v1/library/public/{herons.pk}")
    reader = _as(client, contributor, "read").delete(f"/api/v1/library/public/{herons.pk}")

    assert other.status_code == 403
    assert reader.status_code == 403 and reader.json()["code"] == "read_only_token"
    herons.refresh_from_db()
    assert herons.public is True
