"""Two people in one notebook from their own accounts: sharing, roles, private and posted
conversations, who pays, revoking at once, the audit log, and the commands."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model
from django.core.files.base import ContentFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from billing.models import Usage
from generation.documents.models import GeneratedDocument
from generation.documents.services import generate_document
from ingest.services import process_source
from library.models import Source
from notebooks.models import Conversation
from sharing import access, services
from sharing.models import AuditEvent, Membership, Role

HERONS = b"Grey herons wait motionless at the edge of the pond until a fish swims past."
TRAINS = b"The night train to Vienna leaves the central station at eleven each evening."


@pytest.fixture
def people(db):
    make = get_user_model().objects.create_user
    return {
        "editor": make(username="erin", email="erin@example.org", password="erin-pass-123"),
        "viewer": make(username="vic", email="vic@example.org", password="vic-pass-1234"),
    }


@pytest.fixture
def shared(fake_openai, owner, notebook, people, add_ready_source):
    """The owner's notebook with one ready source, shared with an editor and a viewer
    through the share dialog's view."""
    add_ready_source(notebook, HERONS, "herons.txt")
    from django.test import Client

    client = Client()
    client.force_login(owner)
    for person, role in (("erin", "editor"), ("vic@example.org", "viewer")):
        response = client.post(
            reverse("sharing:share", args=[notebook.pk]), {"person": person, "role": role}
        )
        assert response.status_code == 302, response.content.decode()
    return notebook


def test_sharing_by_name_or_address_gives_each_person_their_role_and_is_audited(
    shared, owner, people
):
    roles = {m.user.username: m.role for m in Membership.objects.filter(notebook=shared)}
    assert roles == {"erin": "editor", "vic": "viewer"}
    assert access.role_of(people["editor"], shared) == Role.EDITOR
    assert access.role_of(people["viewer"], shared) == Role.VIEWER
    events = AuditEvent.objects.filter(notebook=shared).order_by("id")
    assert [(e.action, e.actor_name, e.member_name, e.role) for e in events] == [
        ("shared", "owner", "erin", "editor"),
        ("shared", "owner", "vic", "viewer"),
    ]


def test_the_share_dialog_lists_people_and_history_and_refuses_mistakes(client, shared, owner):
    client.force_login(owner)
    page = client.get(reverse("sharing:notebook", args=[shared.pk])).content.decode()
    assert "erin" in page and "vic" in page
    assert "owner shared it with erin as editor" in page

    for person, message in (
        ("nobody-here", "There is no account called"),
        ("owner", "You own this notebook already"),
        ("", "Enter the user name or e-mail address"),
    ):
        response = client.post(
            reverse("sharing:share", args=[shared.pk]), {"person": person, "role": "viewer"}
        )
        assert response.status_code == 200
        assert message in response.content.decode()
    response = client.post(
        reverse("sharing:share", args=[shared.pk]), {"person": "erin", "role": "admin"}
    )
    assert "Choose whether they can edit or only view" in response.content.decode()
    assert Membership.objects.get(user__username="erin").role == "editor"


def test_an_address_two_accounts_share_is_refused_as_ambiguous(owner, notebook):
    make = get_user_model().objects.create_user
    make(username="a1", email="same@example.org")
    make(username="a2", email="SAME@example.org")
    with pytest.raises(services.SharingError, match="More than one account"):
        services.find_person("same@example.org")


def test_changing_a_role_takes_effect_and_is_audited(client, shared, owner, people):
    client.force_login(owner)
    client.post(reverse("sharing:share", args=[shared.pk]), {"person": "vic", "role": "editor"})
    assert access.role_of(people["viewer"], shared) == Role.EDITOR
    assert AuditEvent.objects.filter(action="role_changed", member_name="vic").exists()


def test_an_editor_asks_in_a_private_conversation_and_pays_for_it(
    client, shared, owner, people, fake_openai
):
    editor = people["editor"]
    client.force_login(editor)
    fake_openai.chat_replies.append("Herons wait at the edge of the pond [1].")
    earlier = Usage.objects.order_by("-id").values_list("id", flat=True).first()
    response = client.post(
        reverse("notebooks:ask", args=[shared.pk]), {"question": "Where do herons wait?"}
    )
    assert response.status_code == 302
    conversation = Conversation.objects.get(notebook=shared, user=editor)
    assert "[1]" in conversation.messages.last().content

    # Every model call of the question is the editor's, none the owner's.
    asked = Usage.objects.filter(id__gt=earlier)
    assert sorted(asked.values_list("kind", "user_id")) == [
        ("chat", editor.pk),
        ("embedding", editor.pk),
    ]

    # Private: the owner and the viewer cannot open it, nor see it listed.
    url = reverse("notebooks:conversation", args=[shared.pk, conversation.pk])
    for other in (owner, people["viewer"]):
        client.force_login(other)
        assert client.get(url).status_code == 404
        page = client.get(reverse("notebooks:detail", args=[shared.pk])).content.decode()
        assert "Where do herons wait?" not in page

    # Posted: both read it, neither may ask in it, rename or delete it.
    client.force_login(editor)
    client.post(
        reverse("notebooks:post_conversation", args=[shared.pk, conversation.pk]), {"posted": "1"}
    )
    client.force_login(people["viewer"])
    page = client.get(url).content.decode()
    assert "Herons wait at the edge of the pond" in page
    assert "Only its owner and editors can ask" in page
    client.force_login(owner)
    assert client.get(url).status_code == 200
    response = client.post(
        reverse("notebooks:ask", args=[shared.pk]),
        {"question": "And fish?", "conversation": conversation.pk},
    )
    assert response.status_code == 404
    rename = reverse("notebooks:rename_conversation", args=[shared.pk, conversation.pk])
    assert client.post(rename, {"title": "Mine now"}).status_code == 404
    conversation.refresh_from_db()
    assert conversation.title == "" and conversation.messages.count() == 2


def test_a_viewer_cannot_ask_upload_add_a_page_or_generate(client, shared, people):
    client.force_login(people["viewer"])
    page = client.get(reverse("notebooks:detail", args=[shared.pk])).content.decode()
    assert reverse("notebooks:upload", args=[shared.pk]) not in page
    assert reverse("studio:create", args=[shared.pk]) not in page
    assert 'name="question"' not in page
    before = (Source.objects.count(), Conversation.objects.count(), Usage.objects.count())

    refused = [
        client.post(reverse("notebooks:ask", args=[shared.pk]), {"question": "Why?"}),
        client.post(reverse("notebooks:ask_stream", args=[shared.pk]), {"question": "Why?"}),
        client.post(
            reverse("notebooks:upload", args=[shared.pk]),
            {"files": [ContentFile(b"Mine.", name="mine.txt")]},
        ),
        client.post(
            reverse("notebooks:add_url", args=[shared.pk]), {"url": "https://example.org/"}
        ),
        client.post(reverse("studio:create", args=[shared.pk]), {"kind": "report"}),
    ]

    assert [response.status_code for response in refused] == [403] * 5
    assert "ask its owner to make you an editor" in refused[0].content.decode()
    assert (Source.objects.count(), Conversation.objects.count(), Usage.objects.count()) == before


def test_an_editors_upload_is_theirs_billed_to_them_and_in_the_owners_notebook(
    client, shared, owner, people
):
    editor = people["editor"]
    client.force_login(editor)
    response = client.post(
        reverse("notebooks:upload", args=[shared.pk]),
        {"files": [ContentFile(TRAINS, name="trains.txt")]},
    )
    assert response.status_code == 302
    source = Source.objects.get(filename="trains.txt")
    assert source.owner == editor
    process_source(source_id=source.pk)

    assert Usage.objects.filter(kind="embedding", user=editor).exists()
    assert set(access.notebook_sources(shared).values_list("title", flat=True)) == {
        "herons",
        "trains",
    }
    # The owner sees it in the notebook; it is not in the owner's library, and the owner
    # may not read it again (the editor's file, billed to the editor).
    client.force_login(owner)
    page = client.get(reverse("notebooks:detail", args=[shared.pk])).content.decode()
    assert "trains" in page
    assert reverse("notebooks:reprocess", args=[shared.pk, source.pk]) not in page
    reprocess = reverse("notebooks:reprocess", args=[shared.pk, source.pk])
    assert client.post(reprocess).status_code == 403
    assert "trains" not in client.get(reverse("library:library")).content.decode()


def test_an_editor_generates_and_pays_and_only_they_or_the_owner_delete_it(
    client, shared, owner, people, fake_openai, settings
):
    settings.CHAT_MODEL = ""  # extractive: no scripted reply needed
    editor = people["editor"]
    client.force_login(editor)
    client.post(reverse("studio:create", args=[shared.pk]), {"kind": "report"})
    document = GeneratedDocument.objects.get(notebook=shared)
    assert document.owner == editor
    generate_document(document_id=document.pk)
    document.refresh_from_db()
    assert document.status == "ready", document.error
    assert document.source.owner == editor
    assert Usage.objects.filter(user=editor, kind="embedding").exists()

    client.force_login(people["viewer"])
    assert client.get(reverse("studio:document", args=[shared.pk, document.pk])).status_code == 200
    delete = reverse("studio:delete", args=[shared.pk, document.pk])
    assert client.post(delete).status_code == 403
    client.force_login(owner)
    assert client.post(delete).status_code == 302
    assert not GeneratedDocument.objects.filter(pk=document.pk).exists()


def test_revoking_takes_effect_on_the_next_request(client, shared, owner, people):
    viewer = people["viewer"]
    client.force_login(viewer)
    detail = reverse("notebooks:detail", args=[shared.pk])
    assert client.get(detail).status_code == 200
    listed = client.get(reverse("notebooks:list")).content.decode()
    assert shared.title in listed

    services.revoke(notebook=shared, actor=owner, person=viewer)

    assert client.get(detail).status_code == 404
    assert shared.title not in client.get(reverse("notebooks:list")).content.decode()
    assert AuditEvent.objects.filter(action="revoked", member_name="vic").exists()


def test_a_member_can_leave_and_the_owner_cannot(client, shared, owner, people):
    client.force_login(people["editor"])
    assert client.post(reverse("sharing:leave", args=[shared.pk])).status_code == 302
    assert access.role_of(people["editor"], shared) is None
    client.force_login(owner)
    assert client.post(reverse("sharing:leave", args=[shared.pk])).status_code == 403


def test_the_shared_with_me_list_names_owner_and_role(client, shared, people):
    client.force_login(people["viewer"])
    page = client.get(reverse("notebooks:list")).content.decode()
    assert "Shared with me" in page
    assert shared.title in page and "owner" in page and "viewer" in page


def test_commands_work_in_a_shared_notebook_by_role(shared, people, capsys, fake_openai):
    fake_openai.chat_replies.append("Herons wait at the pond [1].")
    call_command("ask", "--user", "erin", "--notebook", shared.title, "--json", "Herons?")
    result = json.loads(capsys.readouterr().out)
    assert result["citations"]
    assert Conversation.objects.get(pk=result["conversation_id"]).user == people["editor"]

    with pytest.raises(CommandError, match="ask its owner to make you an editor"):
        call_command("ask", "--user", "vic", "--notebook", shared.title, "Herons?")
    with pytest.raises(CommandError, match="ask its owner to make you an editor"):
        call_command("generate", "--user", "vic", "--notebook", shared.title, "--kind", "report")
