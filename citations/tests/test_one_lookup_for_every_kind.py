"""The page picture's citation lookup (citations/lookup.py) finds an answer's, a note's and a
studio document's citation by the kind its query names, and only where the reader may see it."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.http import Http404

from citations.lookup import cited_passage
from generation.models import DocumentCitation, GeneratedDocument
from notebooks.services import save_answer_as_note
from notebooks.tests.factories import make_cited_answer, make_source
from sharing.models import Membership


@pytest.fixture
def cited(owner, notebook):
    source = make_source(owner=owner, notebook=notebook)
    answer = make_cited_answer(notebook=notebook, source=source)
    note = save_answer_as_note(user=owner, message=answer.message)
    document = GeneratedDocument.objects.create(notebook=notebook, owner=owner, kind="report")
    in_document = DocumentCitation.objects.create(
        document=document,
        n=1,
        chunk=answer.chunk,
        source=source,
        source_title=source.title,
        page=answer.page,
        quote=answer.quote,
        similarity=0.6,
    )
    return {
        "citation": answer,
        "note_citation": note.citations.get(),
        "document_citation": in_document,
    }


def test_each_kind_is_found_by_the_name_its_query_gives(owner, notebook, cited):
    for name, citation in cited.items():
        assert cited_passage(owner, notebook, {name: str(citation.pk)}) == citation
        assert cited_passage(owner, notebook, {name: citation.pk}) == citation


def test_nothing_named_is_none_and_other_parameters_are_passed_over(owner, notebook, cited):
    assert cited_passage(owner, notebook, {}) is None
    assert cited_passage(owner, notebook, {"citation": "", "v": "2"}) is None
    assert cited_passage(owner, notebook, {"citation": None}) is None


def test_an_id_that_is_not_a_number_is_404(owner, notebook, cited):
    with pytest.raises(Http404):
        cited_passage(owner, notebook, {"note_citation": "1; DROP"})


def test_a_member_sees_a_document_s_citation_but_not_an_unposted_answer_s_or_note_s(
    owner, notebook, cited
):
    viewer = get_user_model().objects.create_user(username="viewer", password="viewer-pass-1")
    Membership.objects.create(notebook=notebook, user=viewer, role="viewer")

    found = cited["document_citation"]
    assert cited_passage(viewer, notebook, {"document_citation": found.pk}) == found
    for name in ("citation", "note_citation"):
        with pytest.raises(Http404):
            cited_passage(viewer, notebook, {name: cited[name].pk})


def test_an_outsider_finds_none_of_them(outsider, notebook, cited):
    from notebooks.models import Notebook

    theirs = Notebook.objects.create(owner=outsider, title="Theirs")
    for name, citation in cited.items():
        with pytest.raises(Http404):
            cited_passage(outsider, theirs, {name: citation.pk})
