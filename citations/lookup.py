"""The citation a reader names by its kind and id (a page picture's `?citation=`,
`?note_citation=`, `?document_citation=`, the API's same query), found only among those the
reader may see in the notebook: 404 for any other, as for anything not theirs to see.

The kinds are tables of the apps above this one, so each registers its own in its
`AppConfig.ready` (sharing: an answer's and a note's, by who may read the conversation or
the note; generation: a studio document's), and this app names none of them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import Model, QuerySet
from django.http import Http404
from django.shortcuts import get_object_or_404

from citations.models import CitedPassage

# (reader, notebook) → the citations of one kind the reader may see in the notebook.
Visible = Callable[[User | AnonymousUser, Any], QuerySet[Any]]

_KINDS: dict[str, Visible] = {}


def register(name: str, visible: Visible) -> None:
    """Make the citations `visible` returns findable under `name` (the query parameter that
    names one). Registering a name again replaces it (ready() may run twice in tests)."""
    _KINDS[name] = visible


def cited_passage(
    user: User | AnonymousUser, notebook: Model, named: Mapping[str, object]
) -> CitedPassage | None:
    """The first citation `named` names (kind → id, a page's query string or the API's
    query), if `user` may read it in `notebook`; None when it names none. An id that is not
    a number, or one the reader may not see, is a 404."""
    for name, value in named.items():
        visible = _KINDS.get(name)
        if visible is None or value is None or value == "":
            continue
        if isinstance(value, str):
            if not value.isdigit():
                raise Http404("No such citation.")
            value = int(value)
        return get_object_or_404(visible(user, notebook), pk=value)
    return None
