"""A database made before the search ran on plain PostgreSQL (migrations up to 0018, the
code of 2026-12-01) migrates forward with `migrate` alone, and its sources are searched
as before: nothing to build, nothing to run by hand."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.db import connection

from retrieval.search import search_notebook_hybrid


@pytest.mark.django_db(transaction=True)
def test_a_database_from_before_migrates_forward_and_its_sources_are_searched(
    fake_openai, notebook, add_ready_source
):
    source = add_ready_source(
        notebook, b"Grey herons wait at the edge of the pond. Zygomorphic orchids bloom."
    )
    try:
        call_command("migrate", "library", "0018", verbosity=0)
        with connection.cursor() as cursor:
            cursor.execute("SELECT to_regprocedure('loupe_bm25(tsvector,text[],float8[],float8)')")
            assert cursor.fetchone()[0] is None  # as the search found it then: no function
    finally:
        call_command("migrate", "library", verbosity=0)

    hits = search_notebook_hybrid(
        notebook=notebook,
        question="Where do the zygomorphic orchids bloom?",
        query_vector=[1.0] + [0.0] * 63,
        model="fake-embed",
    )

    assert [hit.chunk.source_id for hit in hits] == [source.pk]
