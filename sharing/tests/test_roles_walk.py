"""Every URL of a shared notebook, walked as its owner, an editor, a viewer, an outsider and
an anonymous visitor: each gets exactly its rights.

The URLs come from the URLconf (notebooks/tests/test_access_walk.py's walker and world: the
owner's notebook with a PDF, a failed text, a cited answer in a conversation the owner
posted to the notebook, and a generated report). A route that takes an id and is missing
from RIGHTS fails test_every_url_with_ids_has_its_rights_written_down, so a new view cannot
slip through unclassified.
"""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from generation.documents.models import GeneratedDocument
from ingest.models import UploadReservation
from library.models import Source
from memory.models import Memory
from notebooks.models import (
    Conversation,
    Message,
    Note,
    Notebook,
    NotebookSource,
    UntickedSource,
)
from notebooks.tests.access_world import (
    OWNER_MAY_GET_404,
    SECRET,
    SITE_ROUTES,
    build_world,
    hostile_data,
    is_login_redirect,
    response_body,
    route_url,
    route_values,
)
from sharing.models import Membership

# What each URL needs. viewer: anyone who may read the notebook; editor: its owner and
# editors; owner: its owner only; author: whoever wrote the conversation (the owner in the
# world); maker: whoever made the document (the owner); member: someone it is shared with
# (leaving); changer: whoever may read the source again (its owner); source_owner: the
# source's owner (adding it to a notebook from the library); publisher: staff or a
# contributor (nobody in the world).
RIGHTS = {
    "notebooks:detail": "viewer",
    "notebooks:sources": "viewer",
    "notebooks:upload": "editor",
    "notebooks:reprocess": "changer",
    "notebooks:remove_source": "editor",
    "notebooks:add_url": "editor",
    "notebooks:ask": "editor",
    "notebooks:ask_stream": "editor",
    "notebooks:message": "viewer",
    "notebooks:new_conversation": "viewer",
    "notebooks:conversation": "viewer",
    "notebooks:rename_conversation": "author",
    "notebooks:delete_conversation": "author",
    "notebooks:post_conversation": "author",
    "notebooks:citation": "viewer",
    "notebooks:page_image": "viewer",
    "notebooks:choose_sources": "editor",
    "notebooks:chat_style": "editor",
    "notebooks:notes": "viewer",
    "notebooks:new_note": "editor",
    # The world's note is the owner's, not posted: only its author reads and changes it.
    "notebooks:note": "author",
    "notebooks:delete_note": "author",
    "notebooks:post_note": "author",
    "notebooks:note_source": "author",
    "notebooks:note_citation": "author",
    # An answer in the owner's posted conversation, saved to a note of one's own.
    "notebooks:save_to_note": "editor",
    "studio:panel": "viewer",
    "studio:create": "editor",
    "studio:document": "viewer",
    "studio:retry": "maker",
    "studio:delete": "maker",
    "studio:csv": "viewer",
    "studio:svg": "viewer",
    "studio:audio": "viewer",
    "studio:pptx": "viewer",
    "studio:pdf": "viewer",
    "studio:video": "viewer",
    "studio:revise": "maker",
    "studio:revision": "viewer",
    "studio:quiz_answer": "viewer",
    "studio:citation": "viewer",
    "sharing:notebook": "owner",
    "sharing:share": "owner",
    "sharing:revoke": "owner",
    "sharing:leave": "member",
    "library:add_to_notebook": "source_owner",
    "library:delete_source": "source_owner",
    "sharing:publish": "publisher",
    "sharing:unpublish": "publisher",
    # A personal access token is its user's alone (the world's is the owner's).
    "tokens:revoke": "author",
    # Remembered facts are kept where one may ask; the world's fact is the owner's.
    "memory:panel": "editor",
    "memory:add": "editor",
    "memory:change": "rememberer",
    "memory:forget": "rememberer",
    # Who may ask there sees what was asked.
    "analytics:notebook": "editor",
    # Direct uploads (none without S3: every role's 404 says nothing), the reservation the
    # owner's.
    "uploads:reserve": "editor",
    "uploads:confirm": "rememberer",
}
ALLOWED = {
    "viewer": {"owner", "editor", "viewer"},
    "editor": {"owner", "editor"},
    "owner": {"owner"},
    "author": {"owner"},
    "maker": {"owner"},
    "member": {"editor", "viewer"},
    "changer": {"owner"},
    "source_owner": {"owner"},
    "publisher": set(),
    "rememberer": {"owner"},
}
# Refusals that say "not yours" by not finding the object among the person's own (a
# conversation, a document, a library source): 404; a role too small for the notebook: 403.
REFUSED_AS_NOT_FOUND = {"author", "source_owner"}
ROLES = ["owner", "editor", "viewer", "outsider", "anonymous"]
ID_ROUTES = [route for route in SITE_ROUTES if route.params]


def test_every_url_with_ids_has_its_rights_written_down():
    missing = [route.name or route.text for route in ID_ROUTES if route.name not in RIGHTS]
    assert not missing, f"add these to RIGHTS in {__file__}: {missing}"


@pytest.fixture
def shared_world(owner, outsider):
    """The walk's world, shared: an editor and a viewer (the world's own member), and the
    owner's conversation posted to the notebook so that every reader may open it."""
    world = build_world(owner, outsider)
    people = get_user_model().objects
    world.editor = people.create_user(username="editor", password="editor-pass-1")
    Membership.objects.create(notebook=world.notebook, user=world.editor, role="editor")
    world.viewer = world.membership.user
    Conversation.objects.filter(pk=world.conversation.pk).update(posted=True)
    return world


def _state(shared) -> dict:
    """What a refused request must leave as it was."""
    return {
        "notebooks": list(Notebook.objects.order_by("pk").values_list("pk", "title")),
        "conversations": list(
            Conversation.objects.order_by("pk").values_list("pk", "title", "posted")
        ),
        "messages": Message.objects.count(),
        "sources": list(
            Source.objects.order_by("pk").values_list("pk", "status", "title", "public")
        ),
        "links": NotebookSource.objects.count(),
        "members": list(Membership.objects.order_by("pk").values_list("pk", "role")),
        "documents": list(GeneratedDocument.objects.order_by("pk").values_list("pk", "status")),
        "notes": list(
            Note.objects.order_by("pk").values_list("pk", "title", "content", "posted", "source")
        ),
        "unticked": UntickedSource.objects.count(),
        "styles": list(Notebook.objects.order_by("pk").values_list("pk", "chat_goal")),
        "memories": list(Memory.objects.order_by("pk").values_list("pk", "text", "notebook")),
        "reservations": UploadReservation.objects.count(),
    }


def _request(client, url: str, shared, role: str):
    response = client.get(url)
    if response.status_code == 405:
        data = hostile_data(shared) | {"person": "outsider", "role": "viewer", "posted": "1"}
        if role != "owner":
            # The owner's conversation is posted, not shared: a question of anyone else's
            # starts their own (asking in it is refused, test_sharing_flow.py).
            del data["conversation"]
        response = client.post(url, data)
    return response


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("route", ID_ROUTES, ids=lambda route: route.name or route.text)
def test_each_role_gets_exactly_its_rights(client, shared_world, route, role, fake_openai):
    walk = shared_world
    need = RIGHTS[route.name]
    url = route_url(route, route_values(route, walk))
    if role != "anonymous":
        person = {"owner": walk.owner, "outsider": walk.outsider}.get(role) or getattr(walk, role)
        client.force_login(person)
    before = _state(walk)
    response = _request(client, url, walk, role)
    where = f"{role} {url}: {response.status_code}"

    if role == "anonymous":
        assert is_login_redirect(response, reverse("login")), where
        assert _state(walk) == before, where
        return
    if role == "outsider":
        # Learns nothing, not even that the notebook exists.
        assert response.status_code == 404, where
        assert SECRET.encode() not in response_body(response).lower(), where
        assert _state(walk) == before, where
        return
    if role in ALLOWED[need]:
        assert response.status_code not in (403, 404) or (
            response.status_code == 404 and route.name in OWNER_MAY_GET_404
        ), where
        assert not is_login_redirect(response, reverse("login")), where
        return
    expected = 404 if need in REFUSED_AS_NOT_FOUND else 403
    if need == "rememberer" and role == "editor":
        expected = 404  # may keep facts here, but this one is the owner's
    assert response.status_code == expected, where
    assert _state(walk) == before, where
