"""Retrieval's SQL applies the same rule as the querysets of sharing/access.py: for every
reader, the chunks a search may rank are exactly those of the notebook's live links, and
only for people who may read the notebook."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.db import connection

from library.models import Chunk, Source
from notebooks.models import Notebook, NotebookSource
from notebooks.tests.factories import make_source
from retrieval.search import search_notebook
from sharing import access
from sharing.models import Membership


def _chunk(source: Source) -> Chunk:
    return Chunk.objects.create(
        source=source,
        ordinal=0,
        text=f"Text of {source.title}.",
        char_start=0,
        char_end=10,
        embedding=[1.0, 0.0, 0.0],
        embedding_model="m",
    )


@pytest.fixture
def world(owner, outsider):
    make = get_user_model().objects.create_user
    editor, viewer, curator = make("editor"), make("viewer"), make("curator", is_staff=True)
    notebook = Notebook.objects.create(owner=owner, title="Shared")
    Membership.objects.create(notebook=notebook, user=editor, role="editor")
    Membership.objects.create(notebook=notebook, user=viewer, role="viewer")
    own = make_source(owner=owner, notebook=notebook, title="owner's own")
    lent = make_source(
        owner=editor, notebook=Notebook.objects.create(owner=editor, title="e"), title="editor's"
    )
    NotebookSource.objects.create(notebook=notebook, source=lent, added_by=editor)
    curated = Notebook.objects.create(owner=curator, title="curated")
    public = make_source(owner=curator, notebook=curated, title="public")
    Source.objects.filter(pk=public.pk).update(public=True, published_by=curator)
    NotebookSource.objects.create(notebook=notebook, source=public, added_by=editor)
    gone = make_source(owner=curator, notebook=curated, title="was public")
    NotebookSource.objects.create(notebook=notebook, source=gone, added_by=editor)  # dead
    # A link nobody could make through Loupe: the outsider's private file put into the
    # owner's notebook by the owner. It must be dead too.
    theirs = make_source(
        owner=outsider, notebook=Notebook.objects.create(owner=outsider, title="o"), title="forged"
    )
    NotebookSource.objects.create(notebook=notebook, source=theirs, added_by=owner)
    for source in (own, lent, public, gone, theirs):
        _chunk(source)
    return {
        "notebook": notebook,
        "readers": {
            "owner": owner,
            "editor": editor,
            "viewer": viewer,
            "outsider": outsider,
            "curator": curator,
        },
    }


def _sql_source_ids(notebook: Notebook, reader) -> set[int]:
    condition = access.searchable_link_sql(link="ns", source="s")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT s.id FROM notebooks_notebooksource ns "
            "JOIN library_source s ON s.id = ns.source_id "
            f"WHERE ns.notebook_id = %(notebook)s AND {condition}",
            {"notebook": notebook.pk, "reader": reader.pk},
        )
        return {row[0] for row in cursor.fetchall()}


def test_the_sql_rule_and_the_querysets_agree_for_every_reader(world):
    notebook = world["notebook"]
    expected_titles = {"owner's own", "editor's", "public"}
    for name, reader in world["readers"].items():
        readable = access.readable_notebooks(reader).filter(pk=notebook.pk).exists()
        by_queryset = set(access.notebook_sources(notebook).values_list("pk", flat=True))
        expected = by_queryset if readable else set()
        assert _sql_source_ids(notebook, reader) == expected, name
    titles = set(access.notebook_sources(notebook).values_list("title", flat=True))
    assert titles == expected_titles


def test_a_search_ranks_only_what_its_reader_may_read(world):
    notebook = world["notebook"]
    for name, reader in world["readers"].items():
        hits = search_notebook(
            notebook=notebook, query_vector=[1.0, 0.0, 0.0], model="m", k=10, reader=reader.pk
        )
        titles = {hit.chunk.source.title for hit in hits}
        if name in ("owner", "editor", "viewer"):
            assert titles == {"owner's own", "editor's", "public"}, name
        else:
            assert titles == set(), name


def test_the_notebook_lists_count_only_live_links(world):
    from django.db.models import Count

    notebook = world["notebook"]
    counted = (
        Notebook.objects.filter(pk=notebook.pk)
        .annotate(live=Count("notebooksource", filter=access.live_link("notebooksource")))
        .get()
        .live
    )
    assert counted == access.notebook_sources(notebook).count() == 3
