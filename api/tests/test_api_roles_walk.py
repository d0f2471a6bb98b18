"""Every API operation that names a notebook, as each role of a shared notebook: its owner,
an editor, a viewer and an outsider, each with a write token. Each gets exactly the rights
the pages give (sharing/tests/test_roles_walk.py): the outsider a 404, a role too small a
403 (a 404 where the object is someone else's own), and a refused call changes nothing.
The operations come from the OpenAPI document, so a new one must have its rights written
down here."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from api.tests.conftest import TokenClient
from api.tokens import create_token
from api.v1.api import api
from memory.models import Memory
from notebooks.models import Conversation, Note
from notebooks.tests.access_world import SECRET, build_world, hostile_json, response_body
from sharing.models import Membership

# (method, path) → who may: viewer, editor, owner, author (the owner, who wrote it; others
# 404), maker (the owner, who made it; others 403), changer (whoever may read the source
# again: its owner; others 403), leaver (the owner, or the member themself: the viewer),
# rememberer (the owner, whose fact it is: an editor, who may keep facts there, 404; a
# viewer, who may not, 403).
RIGHTS = {
    ("get", "/api/v1/notebooks/{notebook_id}"): "viewer",
    ("get", "/api/v1/notebooks/{notebook_id}/sources"): "viewer",
    ("post", "/api/v1/notebooks/{notebook_id}/sources"): "editor",
    ("post", "/api/v1/notebooks/{notebook_id}/sources/url"): "editor",
    ("post", "/api/v1/notebooks/{notebook_id}/sources/{source_id}/reprocess"): "changer",
    ("put", "/api/v1/notebooks/{notebook_id}/sources/chosen"): "editor",
    ("get", "/api/v1/notebooks/{notebook_id}/sources/{source_id}"): "viewer",
    ("delete", "/api/v1/notebooks/{notebook_id}/sources/{source_id}"): "editor",
    ("post", "/api/v1/notebooks/{notebook_id}/ask"): "editor",
    ("post", "/api/v1/notebooks/{notebook_id}/ask/stream"): "editor",
    ("get", "/api/v1/notebooks/{notebook_id}/conversations"): "viewer",
    ("get", "/api/v1/notebooks/{notebook_id}/conversations/{conversation_id}"): "viewer",
    ("delete", "/api/v1/notebooks/{notebook_id}/conversations/{conversation_id}"): "author",
    ("patch", "/api/v1/notebooks/{notebook_id}/conversations/{conversation_id}"): "author",
    # An answer in the owner's posted conversation, saved to a note of one's own.
    ("post", "/api/v1/notebooks/{notebook_id}/messages/{message_id}/note"): "editor",
    ("post", "/api/v1/notebooks/{notebook_id}/documents/{document_id}/retry"): "maker",
    (
        "post",
        "/api/v1/notebooks/{notebook_id}/documents/{document_id}/slides/{number}/revisions",
    ): "maker",
    (
        "get",
        "/api/v1/notebooks/{notebook_id}/documents/{document_id}/revisions/{revision_id}",
    ): "viewer",
    ("get", "/api/v1/notebooks/{notebook_id}/notes"): "viewer",
    ("post", "/api/v1/notebooks/{notebook_id}/notes"): "editor",
    ("get", "/api/v1/notebooks/{notebook_id}/notes/{note_id}"): "author",
    ("patch", "/api/v1/notebooks/{notebook_id}/notes/{note_id}"): "author",
    ("delete", "/api/v1/notebooks/{notebook_id}/notes/{note_id}"): "author",
    ("get", "/api/v1/notebooks/{notebook_id}/documents"): "viewer",
    ("post", "/api/v1/notebooks/{notebook_id}/documents"): "editor",
    ("get", "/api/v1/notebooks/{notebook_id}/documents/{document_id}"): "viewer",
    ("delete", "/api/v1/notebooks/{notebook_id}/documents/{document_id}"): "maker",
    ("get", "/api/v1/notebooks/{notebook_id}/documents/{document_id}/markdown"): "viewer",
    ("get", "/api/v1/notebooks/{notebook_id}/documents/{document_id}/csv"): "viewer",
    ("get", "/api/v1/notebooks/{notebook_id}/documents/{document_id}/svg"): "viewer",
    ("get", "/api/v1/notebooks/{notebook_id}/documents/{document_id}/mp3"): "viewer",
    ("get", "/api/v1/notebooks/{notebook_id}/documents/{document_id}/pptx"): "viewer",
    ("get", "/api/v1/notebooks/{notebook_id}/documents/{document_id}/pdf"): "viewer",
    ("get", "/api/v1/notebooks/{notebook_id}/documents/{document_id}/mp4"): "viewer",
    ("post", "/api/v1/notebooks/{notebook_id}/documents/{document_id}/quiz/{number}"): "viewer",
    ("get", "/api/v1/notebooks/{notebook_id}/sources/{source_id}/pages/{page}"): "viewer",
    # The owner's own source, linked again; to anyone else it is not theirs to link: 404.
    ("post", "/api/v1/notebooks/{notebook_id}/sources/link"): "author",
    ("get", "/api/v1/notebooks/{notebook_id}/chat-style"): "viewer",
    ("put", "/api/v1/notebooks/{notebook_id}/chat-style"): "editor",
    ("get", "/api/v1/notebooks/{notebook_id}/members"): "owner",
    ("put", "/api/v1/notebooks/{notebook_id}/members"): "owner",
    ("delete", "/api/v1/notebooks/{notebook_id}/members/{membership_id}"): "leaver",
    ("get", "/api/v1/notebooks/{notebook_id}/memories"): "editor",
    ("post", "/api/v1/notebooks/{notebook_id}/memories"): "editor",
    ("patch", "/api/v1/notebooks/{notebook_id}/memories/{memory_id}"): "rememberer",
    ("delete", "/api/v1/notebooks/{notebook_id}/memories/{memory_id}"): "rememberer",
}
ALLOWED = {
    "viewer": {"owner", "editor", "viewer"},
    "editor": {"owner", "editor"},
    "owner": {"owner"},
    "author": {"owner"},
    "maker": {"owner"},
    "changer": {"owner"},
    "leaver": {"owner", "viewer"},
    "rememberer": {"owner"},
}
REFUSED_AS_NOT_FOUND = {"author"}
ROLES = ["owner", "editor", "viewer", "outsider"]


def _operations() -> set[tuple[str, str]]:
    document = api.get_openapi_schema()
    return {
        (method, path)
        for path, operations in document["paths"].items()
        for method in operations
        if "{notebook_id}" in path
    }


def test_every_operation_on_a_notebook_has_its_rights_written_down():
    assert _operations() == set(RIGHTS)


@pytest.fixture
def shared(owner, outsider):
    world = build_world(owner, outsider)
    world.editor = get_user_model().objects.create_user(username="editor", password="pw-12345")
    Membership.objects.create(notebook=world.notebook, user=world.editor, role="editor")
    world.viewer = world.membership.user
    Conversation.objects.filter(pk=world.conversation.pk).update(posted=True)
    return world


def _state(world) -> dict:
    return {
        "notes": list(Note.objects.order_by("pk").values_list("pk", "content", "posted")),
        "conversations": list(Conversation.objects.order_by("pk").values_list("pk", "posted")),
        "members": list(Membership.objects.order_by("pk").values_list("pk", "role")),
        "links": list(world.notebook.notebooksource_set.values_list("pk", flat=True)),
        "documents": list(world.notebook.generated_documents.values_list("pk", flat=True)),
        "style": list(type(world.notebook).objects.values_list("pk", "chat_goal", "chat_length")),
        "tokens": list(world.owner.access_tokens.values_list("pk", "revoked_at")),
        "memories": list(Memory.objects.order_by("pk").values_list("pk", "text", "notebook")),
    }


def _url(path: str, world) -> str:
    return path.format(
        notebook_id=world.notebook.pk,
        source_id=world.pdf.pk,
        conversation_id=world.conversation.pk,
        note_id=world.note.pk,
        document_id=world.document.pk,
        membership_id=world.membership.pk,
        message_id=world.message.pk,
        memory_id=world.memory.pk,
        revision_id=world.revision.pk,
        page=1,
        number=1,
    )


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize(
    ("method", "path"), sorted(RIGHTS), ids=[f"{m.upper()} {p}" for m, p in sorted(RIGHTS)]
)
def test_each_role_gets_exactly_its_rights(client, shared, method, path, role, fake_openai):
    world = shared
    person = getattr(world, role)
    caller = TokenClient(client, create_token(user=person, name="walk", scope="write").secret)
    body = hostile_json(world) | {"role": "viewer", "goal": "learning", "length": "default"}
    body["answer"] = "0"
    if role != "owner":
        del body["conversation"]  # the owner's, posted: asking in it is theirs alone
    url = _url(path, world)
    before = _state(world)

    if method == "get":
        response = caller.get(url)
    elif method == "delete":
        response = caller.delete(url)
    elif method == "post" and path.endswith("/sources"):
        from django.core.files.uploadedfile import SimpleUploadedFile

        upload = SimpleUploadedFile("walk.txt", b"Walk text.", "text/plain")
        response = caller.upload(url, {"file": upload})
    else:
        response = getattr(caller, method)(url, body)
    need = RIGHTS[(method, path)]
    content = response_body(response)
    where = f"{role} {method.upper()} {url}: {response.status_code} {content[:200]!r}"

    if role == "outsider":
        assert response.status_code == 404, where
        assert SECRET.encode() not in content.lower(), where
        assert _state(world) == before, where
    elif role in ALLOWED[need]:
        assert response.status_code not in (401, 403, 404), where
    else:
        expected = 404 if need in REFUSED_AS_NOT_FOUND else 403
        if need == "rememberer" and role == "editor":
            expected = 404  # may keep facts here, but this one is the owner's
        assert response.status_code == expected, where
        assert _state(world) == before, where
