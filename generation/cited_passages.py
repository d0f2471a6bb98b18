"""The citation a reader asks a page picture to highlight: an answer's, a note's or a
studio document's, found only among those the reader may see in the notebook (404 for any
other, as for anything not theirs to see). Here because studio documents are generation's,
the lowest layer that knows all three kinds."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.shortcuts import get_object_or_404

from generation.documents.models import DocumentCitation
from notebooks.models import Citation, CitedPassage, Notebook, NoteCitation
from sharing import access


def cited_passage(
    user: User,
    notebook: Notebook,
    *,
    citation: int | None = None,
    note_citation: int | None = None,
    document_citation: int | None = None,
) -> CitedPassage | None:
    """The first of the named citations, if `user` may read it in `notebook`; None when
    none is named."""
    if citation is not None:
        return get_object_or_404(
            Citation,
            pk=citation,
            message__conversation__in=access.visible_conversations(user, notebook),
        )
    if note_citation is not None:
        return get_object_or_404(
            NoteCitation, pk=note_citation, note__in=access.visible_notes(user, notebook)
        )
    if document_citation is not None:
        return get_object_or_404(
            DocumentCitation, pk=document_citation, document__notebook=notebook
        )
    return None
