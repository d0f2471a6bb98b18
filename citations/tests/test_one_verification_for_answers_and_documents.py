"""An answer's citation and a studio document's are quoted and judged by the same rules
(citations/verification.py: verified_citations): the same claim citing the same passage
stores the same quote, support and similarity, and a note copies its answer's."""

from __future__ import annotations

import pytest

from generation.answering.storing import _store
from generation.documents.markers import cite
from generation.models import DocumentCitation
from library.models import Chunk
from notebooks.models import Message
from notebooks.services import save_answer_as_note
from notebooks.tests.factories import make_source
from retrieval.search import Hit

PASSAGE = (
    "Sea otters hold hands while they sleep. "
    "They wrap themselves in kelp so they do not drift apart."
)
SHARED = ["n", "chunk_id", "source_id", "page", "quote", "similarity", "supported", "support_score"]


@pytest.fixture
def hits(owner, notebook):
    source = make_source(owner=owner, notebook=notebook)
    chunk = Chunk.objects.create(
        source=source,
        ordinal=0,
        page=3,
        text=PASSAGE,
        char_start=0,
        char_end=len(PASSAGE),
        embedding=[0.1] * 3,
        embedding_model="m",
    )
    return [Hit(chunk=chunk, similarity=0.812345)]


def test_an_answer_a_note_and_a_document_cite_one_passage_alike(owner, notebook, hits):
    claim = "Sea otters wrap themselves in kelp [1]. The moon is made of cheese [1]."
    answer = _store(
        user=owner,
        notebook=notebook,
        conversation=None,
        question="Why kelp?",
        text=claim,
        mode=Message.Mode.LLM,
        hits=hits,
        order=[1],
        model="m",
        attributed={1},
    )
    _data, in_document = cite({"markdown": claim}, hits, attributed={1})
    note = save_answer_as_note(user=owner, message=answer.message)

    stored = answer.message.citations.get()
    document = DocumentCitation(**in_document[0])  # the fields a document stores
    assert [getattr(stored, name) for name in SHARED] == [
        getattr(document, name) for name in SHARED
    ]
    assert stored.quote == "They wrap themselves in kelp so they do not drift apart."
    assert stored.supported is False  # the cheese is in no passage
    assert stored.attributed is True and document.attributed is True
    copied = note.citations.get()
    assert [getattr(copied, name) for name in [*SHARED, "attributed"]] == [
        getattr(stored, name) for name in [*SHARED, "attributed"]
    ]
