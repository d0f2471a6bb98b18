"""The public library: publishing, browsing and searching, one set of chunks serving many
notebooks, and unpublishing that takes effect at once."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core.exceptions import PermissionDenied
from django.urls import reverse

from generation.answering import answer_question
from library.models import Chunk, Source
from notebooks.models import Citation, Notebook
from retrieval.services import retrieve
from sharing import access, services
from sharing.models import AuditEvent

HERONS = b"Grey herons wait motionless at the edge of the pond until a fish swims past."


@pytest.fixture
def staff(db):
    return get_user_model().objects.create_user(
        username="curator", password="curator-pass-1", is_staff=True
    )


@pytest.fixture
def published(fake_openai, staff, add_ready_source):
    """A ready source in the curator's own notebook, published."""
    theirs = Notebook.objects.create(owner=staff, title="Curated")
    source = add_ready_source(theirs, HERONS, "herons.txt")
    services.publish(source=source, actor=staff)
    return source


def test_staff_publish_and_everyone_signed_in_finds_it(client, published, outsider):
    assert published.public and published.published_by.username == "curator"
    assert AuditEvent.objects.filter(action="published", source=published).exists()

    client.force_login(outsider)
    page = client.get(reverse("sharing:public_library")).content.decode()
    assert "herons" in page and "Public" in page
    # Found by a word of its text, not found by one it lacks.
    assert (
        "herons"
        in client.get(reverse("sharing:public_library"), {"q": "motionless"}).content.decode()
    )
    missed = client.get(reverse("sharing:public_library"), {"q": "locomotive"}).content.decode()
    assert "Nothing public matches" in missed
    # PostgreSQL stores no NUL: a search no page sends is refused, naming the field.
    refused = client.get(reverse("sharing:public_library"), {"q": "her\u0000ons"})
    assert refused.status_code == 400 and "q:" in refused.content.decode()

    client.logout()
    response = client.get(reverse("sharing:public_library"))
    assert response.status_code == 302 and reverse("login") in response.url


def test_adding_a_public_source_links_the_same_chunks(client, published, owner, notebook):
    sources, chunks = Source.objects.count(), Chunk.objects.count()
    client.force_login(owner)
    response = client.post(
        reverse("library:add_to_notebook", args=[published.pk]), {"notebook": notebook.pk}
    )
    assert response.status_code == 302
    assert (Source.objects.count(), Chunk.objects.count()) == (sources, chunks)
    assert list(access.notebook_sources(notebook)) == [published]
    hits = retrieve(user=owner, notebook=notebook, question="Where do herons wait?")
    assert {hit.chunk.source_id for hit in hits} == {published.pk}


def test_unpublishing_takes_it_out_of_other_notebooks_at_once(
    client, published, staff, owner, notebook, fake_openai
):
    client.force_login(owner)
    client.post(reverse("library:add_to_notebook", args=[published.pk]), {"notebook": notebook.pk})
    fake_openai.chat_replies.append("Herons wait at the pond [1].")
    answer = answer_question(user=owner, notebook=notebook, question="Where do herons wait?")
    citation = Citation.objects.get(message=answer.message)

    services.unpublish(source=published, actor=staff)

    assert list(access.notebook_sources(notebook)) == []
    assert retrieve(user=owner, notebook=notebook, question="Where do herons wait?") == []
    page = client.get(reverse("notebooks:citation", args=[notebook.pk, citation.pk]))
    assert "source removed" in page.content.decode().lower()
    assert "motionless" not in page.content.decode()
    detail = client.get(reverse("notebooks:detail", args=[notebook.pk])).content.decode()
    assert "herons.txt" not in detail
    # The curator's own notebook keeps it: they put it there as its owner.
    curated = Notebook.objects.get(title="Curated")
    assert list(access.notebook_sources(curated)) == [published]
    assert AuditEvent.objects.filter(action="unpublished", source=published).exists()


def test_only_contributors_publish_and_only_the_publisher_or_staff_unpublish(
    fake_openai, owner, outsider, notebook, add_ready_source, staff
):
    mine = add_ready_source(notebook, HERONS, "herons.txt")
    with pytest.raises(PermissionDenied):
        services.publish(source=mine, actor=owner)

    owner.user_permissions.add(Permission.objects.get(codename="publish_source"))
    owner = get_user_model().objects.get(pk=owner.pk)  # the permission cache is per object
    services.publish(source=mine, actor=owner)
    mine.refresh_from_db()
    assert mine.public

    with pytest.raises(PermissionDenied):
        services.unpublish(source=mine, actor=outsider)
    # Nobody else may read it again either: it is the publisher's to change.
    assert not access.changeable_sources(outsider).filter(pk=mine.pk).exists()
    services.unpublish(source=mine, actor=staff)
    mine.refresh_from_db()
    assert not mine.public


def test_a_contributor_cannot_publish_someone_elses_source(
    fake_openai, owner, outsider, notebook, add_ready_source
):
    theirs = add_ready_source(notebook, HERONS, "herons.txt")
    outsider.user_permissions.add(Permission.objects.get(codename="publish_source"))
    outsider = get_user_model().objects.get(pk=outsider.pk)
    with pytest.raises(PermissionDenied):
        services.publish(source=theirs, actor=outsider)


def test_the_library_page_offers_publishing_to_contributors_only(
    client, fake_openai, owner, notebook, add_ready_source
):
    mine = add_ready_source(notebook, HERONS, "herons.txt")
    client.force_login(owner)
    publish = reverse("sharing:publish", args=[mine.pk])
    assert publish not in client.get(reverse("library:library")).content.decode()
    assert client.post(publish).status_code == 403

    owner.user_permissions.add(Permission.objects.get(codename="publish_source"))
    assert publish in client.get(reverse("library:library")).content.decode()
    assert client.post(publish).status_code == 302
    page = client.get(reverse("library:library")).content.decode()
    assert reverse("sharing:unpublish", args=[mine.pk]) in page


def test_the_admin_action_publishes_through_the_same_rule(client, fake_openai, published, staff):
    admin = get_user_model().objects.create_superuser("boss", "boss@example.org", "pw")
    client.force_login(admin)
    response = client.post(
        reverse("admin:library_source_changelist"),
        {"action": "unpublish", "_selected_action": [published.pk]},
    )
    assert response.status_code == 302
    published.refresh_from_db()
    assert not published.public
    assert AuditEvent.objects.filter(action="unpublished", actor_name="boss").exists()
