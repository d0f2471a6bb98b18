"""A studio request no page of ours sends (a NUL character PostgreSQL cannot store, a delete
from a place that is not the panel) is refused with 400 naming the field, and changes nothing."""

from __future__ import annotations

import pytest
from django.urls import reverse

from generation.documents.models import GeneratedDocument, SlideRevision

NUL = "before\x00after"


@pytest.fixture
def ready(owner, notebook):
    def make(kind: str) -> GeneratedDocument:
        return GeneratedDocument.objects.create(
            notebook=notebook,
            owner=owner,
            kind=kind,
            status=GeneratedDocument.Status.READY,
            title="Herons",
            content={},
        )

    return make


def test_a_document_asked_with_a_nul_in_its_language_is_refused_and_not_queued(
    client, owner, notebook
):
    client.force_login(owner)

    response = client.post(
        reverse("studio:create", args=[notebook.pk]), {"kind": "report", "language": NUL}
    )

    assert response.status_code == 400
    assert "language: Null characters are not allowed" in response.text
    assert not GeneratedDocument.objects.exists()


def test_a_delete_from_an_unknown_place_is_refused_and_the_document_kept(
    client, owner, notebook, ready
):
    document = ready(GeneratedDocument.Kind.REPORT)
    client.force_login(owner)
    url = reverse("studio:delete", args=[notebook.pk, document.pk])

    response = client.post(url, {"from": "elsewhere"})

    assert response.status_code == 400
    assert "from: Select a valid choice" in response.text
    assert GeneratedDocument.objects.filter(pk=document.pk).exists()
    panel = client.post(url, {"from": "panel"}, headers={"HX-Request": "true"})
    assert panel.status_code == 200
    assert not GeneratedDocument.objects.filter(pk=document.pk).exists()


def test_a_slide_instruction_with_a_nul_is_refused_and_no_revision_queued(
    client, owner, notebook, ready
):
    document = ready(GeneratedDocument.Kind.SLIDES)
    client.force_login(owner)

    response = client.post(
        reverse("studio:revise", args=[notebook.pk, document.pk, 1]), {"instruction": NUL}
    )

    assert response.status_code == 400
    assert "instruction: Null characters are not allowed" in response.text
    assert not SlideRevision.objects.exists()


def test_a_quiz_answer_with_a_nul_is_refused(client, owner, notebook, ready):
    document = ready(GeneratedDocument.Kind.QUIZ)
    client.force_login(owner)

    response = client.post(
        reverse("studio:quiz_answer", args=[notebook.pk, document.pk, 1]), {"answer": NUL}
    )

    assert response.status_code == 400
    assert "answer: Null characters are not allowed" in response.text


def test_an_outsider_still_gets_404_not_400(client, outsider, notebook, ready):
    document = ready(GeneratedDocument.Kind.REPORT)
    client.force_login(outsider)

    response = client.post(
        reverse("studio:delete", args=[notebook.pk, document.pk]), {"from": "elsewhere"}
    )

    assert response.status_code == 404
    assert GeneratedDocument.objects.filter(pk=document.pk).exists()
