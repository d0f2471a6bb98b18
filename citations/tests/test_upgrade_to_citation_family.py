"""A database from before the citation family (an answer's "placed by Loupe" in generation's
side table AttributedCitation, up to generation 0008 and notebooks 0009) migrates forward
with `migrate` alone and keeps every citation and every mark; migrating back makes the
side table's rows again."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.db import connection

from generation.models import DocumentCitation, GeneratedDocument
from notebooks.models import Citation, NoteCitation
from notebooks.services import save_answer_as_note
from notebooks.tests.factories import make_cited_answer, make_source


def _rows(table: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM {table}")  # noqa: S608 (a fixed table name)
        return cursor.fetchone()[0]


def _side_table() -> list[int]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT citation_id FROM generation_attributedcitation ORDER BY 1")
        return [row[0] for row in cursor.fetchall()]


@pytest.mark.django_db(transaction=True)
def test_citations_and_their_marks_survive_the_migration_back_and_forward(owner, notebook):
    source = make_source(owner=owner, notebook=notebook)
    placed = make_cited_answer(
        notebook=notebook, source=source, content="Otters hold hands [1]. They sleep [2]."
    )
    placed.attributed = True
    placed.save(update_fields=["attributed"])
    written = Citation.objects.create(
        message=placed.message,
        n=2,
        chunk=placed.chunk,
        source=source,
        source_title=source.title,
        page=placed.page,
        quote=placed.quote,
        similarity=0.7,
    )
    note = save_answer_as_note(user=owner, message=placed.message)
    document = GeneratedDocument.objects.create(notebook=notebook, owner=owner, kind="report")
    DocumentCitation.objects.create(
        document=document,
        n=1,
        chunk=placed.chunk,
        source=source,
        source_title=source.title,
        page=placed.page,
        quote=placed.quote,
        similarity=0.6,
        attributed=True,
    )
    tables = ["notebooks_citation", "notebooks_notecitation", "generation_documentcitation"]
    counts = {table: _rows(table) for table in tables}
    try:
        call_command("migrate", "generation", "0008_slides_and_video", verbosity=0)
        call_command("migrate", "notebooks", "0009_memory_commands_and_given_facts", verbosity=0)
        assert _side_table() == [placed.pk]  # the mark went back into the side table
        assert {table: _rows(table) for table in tables} == counts
        # A mark the database from before held for the other citation too.
        with connection.cursor() as cursor:
            cursor.execute(
                "INSERT INTO generation_attributedcitation (citation_id) VALUES (%s)",
                [written.pk],
            )
    finally:
        call_command("migrate", verbosity=0)

    assert {table: _rows(table) for table in tables} == counts
    assert {
        cited.n: cited.attributed for cited in Citation.objects.filter(message=placed.message)
    } == {
        1: True,
        2: True,
    }
    # A note copies its answer's citations, marks included.
    assert {cited.n: cited.attributed for cited in NoteCitation.objects.filter(note=note)} == {
        1: True,
        2: True,
    }
    assert DocumentCitation.objects.get(document=document).attributed is True
    with connection.cursor() as cursor:
        cursor.execute("SELECT to_regclass('generation_attributedcitation')")
        assert cursor.fetchone()[0] is None
