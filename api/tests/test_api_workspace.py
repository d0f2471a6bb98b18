"""Notebooks, sources, notes, studio documents and the account through the API, under the
pages' rules: the same services, the same 404 for other people's ids."""

from __future__ import annotations

from django.core.files.uploadedfile import SimpleUploadedFile

from generation.documents.models import GeneratedDocument
from ingest.services import process_source
from ingest.tests import office_files
from library.models import Source
from notebooks.models import Note, NotebookSource, UntickedSource
from sharing.models import Membership


def test_notebooks_are_listed_with_the_callers_role(api, owner, outsider, notebook):
    shared = notebook.__class__.objects.create(owner=outsider, title="Shared")
    Membership.objects.create(notebook=shared, user=owner, role="viewer")

    listed = {row["title"]: row["role"] for row in api.get("/api/v1/notebooks").json()}

    assert listed == {"Research": "owner", "Shared": "viewer"}
    assert api.get(f"/api/v1/notebooks/{shared.pk}").json()["owner"] == "outsider"
    # A viewer may read, not add.
    refused = api.post(f"/api/v1/notebooks/{shared.pk}/notes", {"content": "Mine"})
    assert refused.status_code == 403 and refused.json()["code"] == "forbidden"


def test_a_taken_title_is_409_naming_the_field(api, notebook):
    response = api.post("/api/v1/notebooks", {"title": "Research"})
    assert response.status_code == 409
    assert response.json() == {
        "code": "title_taken",
        "message": response.json()["message"],
        "field": "body.title",
    }


def test_an_upload_becomes_a_queued_source_with_progress(api, notebook):
    upload = SimpleUploadedFile("otters.txt", b"Sea otters hold hands.", "text/plain")

    response = api.upload(f"/api/v1/notebooks/{notebook.pk}/sources", {"file": upload})

    assert response.status_code == 201, response.content
    added = response.json()
    assert added["created"] is True and added["source"]["status"] == "queued"
    status = api.get(f"/api/v1/notebooks/{notebook.pk}/sources/{added['source']['id']}").json()
    assert {"stage", "progress_done", "progress_total", "error"} <= set(status)


def test_a_word_file_is_a_source_of_kind_document_whose_reader_names_it(
    fake_openai, api, notebook, tmp_path
):
    path = office_files.docx(tmp_path / "otters.docx", office_files.paragraph("Sea otters."))
    upload = SimpleUploadedFile("otters.docx", path.read_bytes())

    added = api.upload(f"/api/v1/notebooks/{notebook.pk}/sources", {"file": upload}).json()
    process_source(source_id=added["source"]["id"])

    shown = api.get(f"/api/v1/notebooks/{notebook.pk}/sources/{added['source']['id']}").json()
    assert (shown["kind"], shown["reader"]) == ("document", "Word document")


def test_an_empty_upload_and_a_bad_url_are_refused_naming_the_field(api, notebook):
    empty = SimpleUploadedFile("empty.txt", b"", "text/plain")
    response = api.upload(f"/api/v1/notebooks/{notebook.pk}/sources", {"file": empty})
    assert response.status_code == 400 and response.json()["field"] == "file"

    missing = api.upload(f"/api/v1/notebooks/{notebook.pk}/sources", {})
    assert missing.status_code == 422 and missing.json()["field"] == "file.file"

    url = api.post(f"/api/v1/notebooks/{notebook.pk}/sources/url", {"url": "ftp://x"})
    assert url.status_code == 400 and url.json()["field"] == "body.url"
    assert not Source.objects.exists()


def test_sources_are_chosen_read_again_and_removed(api, owner, notebook, library):
    herons, trains, bread = library
    base = f"/api/v1/notebooks/{notebook.pk}/sources"

    chosen = api.put(f"{base}/chosen", {"ticked": [herons.pk]})
    assert chosen.status_code == 200 and chosen.json() == {"ticked": [herons.pk]}
    assert set(UntickedSource.objects.values_list("source_id", flat=True)) == {trains.pk, bread.pk}
    listed = {row["id"]: row["ticked"] for row in api.get(base).json()}
    assert listed == {herons.pk: True, trains.pk: False, bread.pk: False}
    unknown = api.put(f"{base}/chosen", {"ticked": [10**9]})
    assert unknown.status_code == 404 and unknown.json()["field"] == "body.ticked"

    again = api.post(f"{base}/{trains.pk}/reprocess")
    assert again.status_code == 202 and again.json()["status"] == "queued"

    assert api.delete(f"{base}/{bread.pk}").status_code == 204
    assert not NotebookSource.objects.filter(notebook=notebook, source=bread).exists()
    assert Source.objects.filter(pk=bread.pk).exists()  # still in the library


def test_notes_are_written_changed_posted_made_sources_and_deleted(api, notebook):
    base = f"/api/v1/notebooks/{notebook.pk}/notes"
    made = api.post(base, {"content": "Herons *wait*.", "title": "Birds"})
    assert made.status_code == 201
    note_id = made.json()["id"]

    changed = api.patch(f"{base}/{note_id}", {"content": "Herons wait.", "posted": True})
    assert changed.json()["content"] == "Herons wait." and changed.json()["posted"] is True
    as_source = api.patch(f"{base}/{note_id}", {"is_source": True})
    assert as_source.json()["source_id"] is not None
    assert [row["id"] for row in api.get(base).json()] == [note_id]
    empty = api.patch(f"{base}/{note_id}", {"content": ""})
    assert empty.status_code == 422 and empty.json()["field"] == "body.content"

    assert api.delete(f"{base}/{note_id}").status_code == 204
    assert not Note.objects.exists()


def test_a_studio_document_is_queued_then_read_when_ready(api, owner, notebook, library, settings):
    settings.CHAT_MODEL = ""  # made offline, from the sources' own sentences
    base = f"/api/v1/notebooks/{notebook.pk}/documents"

    made = api.post(base, {"kind": "report"})

    assert made.status_code == 202, made.content
    document = GeneratedDocument.objects.get(pk=made.json()["id"])
    assert document.owner == owner and made.json()["status"] == "queued"
    not_yet = api.get(f"{base}/{document.pk}/markdown")
    assert not_yet.status_code == 409 and not_yet.json()["code"] == "not_ready"
    bad = api.post(base, {"kind": "poem"})
    assert bad.status_code == 422 and bad.json()["field"] == "body.kind"

    from generation.documents.services import generate_document

    generate_document(document_id=document.pk)
    ready = api.get(f"{base}/{document.pk}").json()
    assert ready["status"] == "ready" and ready["content"], ready["error"]
    markdown = api.get(f"{base}/{document.pk}/markdown")
    assert markdown.status_code == 200 and markdown["Content-Type"].startswith("text/markdown")
    assert "[1]" in markdown.text and ready["citations"][0]["quote"]
    for other in ("csv", "svg", "mp3", "pptx", "pdf", "mp4"):  # a report has none of these
        assert api.get(f"{base}/{document.pk}/{other}").json()["code"] == "not_found"
    assert api.delete(f"{base}/{document.pk}").status_code == 204


def test_a_slide_deck_is_fetched_as_pptx_and_pdf(api, owner, notebook, library, settings):
    settings.CHAT_MODEL = ""
    base = f"/api/v1/notebooks/{notebook.pk}/documents"
    made = api.post(base, {"kind": "slides", "video_format": "brief"})  # ignored: no video
    document = GeneratedDocument.objects.get(pk=made.json()["id"])
    from generation.documents.services import generate_document

    generate_document(document_id=document.pk)

    ready = api.get(f"{base}/{document.pk}").json()
    assert ready["status"] == "ready", ready["error"]
    pptx = api.get(f"{base}/{document.pk}/pptx")
    assert pptx.status_code == 200 and pptx["Content-Type"].endswith("presentationml.presentation")
    assert b"".join(pptx.streaming_content)[:2] == b"PK"
    pdf = api.get(f"{base}/{document.pk}/pdf")
    assert b"".join(pdf.streaming_content)[:5] == b"%PDF-"
    assert api.get(f"{base}/{document.pk}/mp4").json()["code"] == "not_found"


def test_the_account_shows_credit_usage_and_the_token(api, owner, notebook, library):
    me = api.get("/api/v1/me").json()
    assert me["username"] == "owner" and me["token"] == "script" and me["scope"] == "write"
    assert float(me["credit"]) > 0 and me["usage"]


def test_the_owner_shares_and_unshares_a_member_leaves(api, client, owner, outsider, notebook):
    from api.tests.conftest import TokenClient
    from api.tokens import create_token

    base = f"/api/v1/notebooks/{notebook.pk}/members"
    shared = api.put(base, {"person": "outsider", "role": "viewer"})
    assert shared.status_code == 200 and shared.json()["role"] == "viewer"
    assert api.get(base).json() == [shared.json()]
    nobody = api.put(base, {"person": "nobody", "role": "editor"})
    assert nobody.status_code == 404 and nobody.json()["field"] == "body.person"

    member = TokenClient(client, create_token(user=outsider, name="m", scope="write").secret)
    assert member.get(base).status_code == 403  # only the owner sees who is in
    assert member.delete(f"{base}/{shared.json()['id']}").status_code == 204  # leaves
    assert not Membership.objects.exists()
    assert member.get(f"/api/v1/notebooks/{notebook.pk}").status_code == 404


def test_a_conversation_is_renamed_posted_and_an_answer_saved_to_a_note(api, owner, notebook):
    from notebooks.tests.factories import make_cited_answer, make_source

    cited = make_cited_answer(notebook=notebook, source=make_source(owner=owner, notebook=notebook))
    conversation = cited.message.conversation
    base = f"/api/v1/notebooks/{notebook.pk}"

    changed = api.patch(
        f"{base}/conversations/{conversation.pk}", {"title": " Otters ", "posted": True}
    )
    assert changed.json()["title"] == "Otters" and changed.json()["posted"] is True

    saved = api.post(f"{base}/messages/{cited.message.pk}/note")
    assert saved.status_code == 201 and saved.json()["citations"][0]["quote"]
    question = conversation.messages.get(role="user")
    refused = api.post(f"{base}/messages/{question.pk}/note")
    assert refused.status_code == 409 and refused.json()["code"] == "not_an_answer"


def test_a_failed_document_is_made_again_by_its_maker(api, owner, notebook):
    document = GeneratedDocument.objects.create(
        notebook=notebook, owner=owner, kind="report", status="failed", error="It failed."
    )

    again = api.post(f"/api/v1/notebooks/{notebook.pk}/documents/{document.pk}/retry")

    assert again.status_code == 202 and again.json()["status"] == "queued"
