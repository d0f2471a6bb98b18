"""Notes beside the sources: written in Markdown (rendered and sanitised as answers are), or
an answer saved with its citations, which keep opening their passages; their author's,
read by the notebook's other readers once posted."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from notebooks.models import Note, NoteCitation
from notebooks.services import save_answer_as_note, unlink_source
from notebooks.tests.factories import make_cited_answer, make_source
from sharing.models import Membership
from texts.errors import UserFacingError

HX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def cited(owner, notebook):
    source = make_source(owner=owner, notebook=notebook, title="Otter facts")
    return make_cited_answer(notebook=notebook, source=source)


@pytest.fixture
def viewer(notebook):
    user = get_user_model().objects.create_user(username="vi", password="vi-pass-123")
    Membership.objects.create(notebook=notebook, user=user, role="viewer")
    return user


def test_a_written_note_is_rendered_as_markdown_and_sanitised(client, owner, notebook):
    client.force_login(owner)

    response = client.post(
        reverse("notebooks:new_note", args=[notebook.pk]),
        {"title": "Plan", "content": "**Read** chapter 2\n\n<script>alert(1)</script>"},
        **HX,
    )

    assert response.status_code == 200
    note = Note.objects.get()
    assert (note.user, note.title, note.posted) == (owner, "Plan", False)
    assert "<strong>Read</strong>" in response.text
    assert "<script>alert(1)</script>" not in response.text
    assert "&lt;script&gt;" in response.text


def test_an_empty_note_is_refused_with_a_reason(client, owner, notebook):
    client.force_login(owner)

    response = client.post(
        reverse("notebooks:new_note", args=[notebook.pk]), {"content": "  "}, **HX
    )

    assert "A note needs some text." in response.text
    assert not Note.objects.exists()


def test_an_answer_saved_to_a_note_keeps_its_citations_and_they_open_the_passage(
    client, owner, notebook, cited
):
    client.force_login(owner)

    response = client.post(
        reverse("notebooks:save_to_note", args=[notebook.pk, cited.message.pk]), **HX
    )

    note = Note.objects.get()
    assert note.content == "Otters hold hands [1]."
    assert note.title == "Why?"  # the question it answered
    kept = note.citations.get()
    assert (kept.n, kept.chunk_id, kept.source_id, kept.quote, kept.page) == (
        1,
        cited.chunk_id,
        cited.source_id,
        cited.quote,
        4,
    )
    url = reverse("notebooks:note_citation", args=[notebook.pk, kept.pk])
    assert f'href="{url}"' in response.text  # the [1] in the note links to it
    passage = client.get(url, **HX)
    assert passage.status_code == 200
    assert "Sea otters hold hands while they sleep." in passage.text

    # Deleting the conversation leaves the note and its citations.
    cited.message.conversation.delete()
    assert NoteCitation.objects.filter(pk=kept.pk).exists()


def test_a_note_citation_into_a_removed_source_says_source_removed(client, owner, notebook, cited):
    note = save_answer_as_note(user=owner, message=cited.message)
    unlink_source(notebook=notebook, source=cited.source)
    client.force_login(owner)

    passage = client.get(
        reverse("notebooks:note_citation", args=[notebook.pk, note.citations.get().pk]), **HX
    )

    assert "Source removed" in passage.text
    assert "Sea otters hold hands while they sleep." not in passage.text


def test_a_refusal_cannot_be_saved_as_a_note(owner, notebook, cited):
    cited.message.mode = "refusal"
    with pytest.raises(UserFacingError, match="Only an answer"):
        save_answer_as_note(user=owner, message=cited.message)


def test_a_private_note_is_its_authors_until_posted(client, owner, notebook, viewer, cited):
    note = save_answer_as_note(user=owner, message=cited.message)
    kept = note.citations.get()
    client.force_login(viewer)
    detail = reverse("notebooks:detail", args=[notebook.pk])
    citation = reverse("notebooks:note_citation", args=[notebook.pk, kept.pk])

    assert (
        "Otters hold hands" not in client.get(reverse("notebooks:notes", args=[notebook.pk])).text
    )
    assert client.get(citation).status_code == 404
    assert client.get(reverse("notebooks:note", args=[notebook.pk, note.pk])).status_code == 404

    client.force_login(owner)
    client.post(reverse("notebooks:post_note", args=[notebook.pk, note.pk]), {"posted": "1"})
    client.force_login(viewer)

    page = client.get(detail).text
    assert "Otters hold hands" in page
    assert client.get(citation).status_code == 200
    # A reader, not its author: no changing it.
    edit = reverse("notebooks:note", args=[notebook.pk, note.pk])
    assert client.get(edit, {"edit": "1"}).status_code == 404
    assert client.post(edit, {"content": "Mine now"}).status_code == 404
    assert (
        client.post(reverse("notebooks:delete_note", args=[notebook.pk, note.pk])).status_code
        == 404
    )
    assert Note.objects.get().content == "Otters hold hands [1]."


def test_an_editor_cannot_change_someone_elses_posted_note(client, owner, notebook, cited):
    editor = get_user_model().objects.create_user(username="ed", password="ed-pass-123")
    Membership.objects.create(notebook=notebook, user=editor, role="editor")
    note = save_answer_as_note(user=owner, message=cited.message)
    Note.objects.filter(pk=note.pk).update(posted=True)
    client.force_login(editor)

    for name, data in [
        ("note", {"content": "Mine"}),
        ("delete_note", {}),
        ("post_note", {"posted": "0"}),
        ("note_source", {"source": "1"}),
    ]:
        response = client.post(reverse(f"notebooks:{name}", args=[notebook.pk, note.pk]), data)
        assert response.status_code == 404, name
    note.refresh_from_db()
    assert (note.content, note.posted, note.source_id) == ("Otters hold hands [1].", True, None)


def test_the_author_edits_and_deletes_a_note(client, owner, notebook):
    client.force_login(owner)
    client.post(reverse("notebooks:new_note", args=[notebook.pk]), {"content": "First"})
    note = Note.objects.get()
    url = reverse("notebooks:note", args=[notebook.pk, note.pk])

    form = client.get(url, {"edit": "1"}, **HX)
    assert "<textarea" in form.text and "First" in form.text
    client.post(url, {"content": "Second", "title": "T"}, **HX)
    note.refresh_from_db()
    assert (note.content, note.title) == ("Second", "T")

    client.post(reverse("notebooks:delete_note", args=[notebook.pk, note.pk]), **HX)
    assert not Note.objects.exists()


def test_outsiders_and_anonymous_visitors_reach_no_note(client, owner, outsider, notebook, cited):
    note = save_answer_as_note(user=owner, message=cited.message)
    Note.objects.filter(pk=note.pk).update(posted=True)
    urls = [
        ("get", reverse("notebooks:notes", args=[notebook.pk])),
        ("get", reverse("notebooks:note", args=[notebook.pk, note.pk])),
        ("get", reverse("notebooks:note_citation", args=[notebook.pk, note.citations.get().pk])),
        ("post", reverse("notebooks:new_note", args=[notebook.pk])),
        ("post", reverse("notebooks:save_to_note", args=[notebook.pk, cited.message.pk])),
        ("post", reverse("notebooks:note_source", args=[notebook.pk, note.pk])),
    ]
    for method, url in urls:
        response = getattr(client, method)(url, {"content": "x", "source": "1"})
        assert response.status_code == 302 and "/login/" in response.url, url
    client.force_login(outsider)
    for method, url in urls:
        response = getattr(client, method)(url, {"content": "x", "source": "1"})
        assert response.status_code == 404, url
        assert b"Otters" not in response.content
    assert Note.objects.count() == 1 and Note.objects.get().source_id is None
