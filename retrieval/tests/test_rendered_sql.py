"""Every variant of the search statements as it runs, kept beside the tests, so a change to
a statement (or to what fills its placeholders: the access rule, the hits' columns, the
index's type) shows in a diff as the SQL PostgreSQL receives.

After a deliberate change, write them again and commit the diff:

    .venv/bin/python -c "from retrieval.tests.test_rendered_sql import write; write()"
"""

from __future__ import annotations

from pathlib import Path

import pytest

RENDERED = Path(__file__).resolve().parent / "rendered"
# 384: the local e5's vectors, indexed as vector(384); 3072: a large remote model's,
# indexed as halfvec(3072); 5000: too many for any index, the HNSW branch casts to vector.
VARIANTS = {
    f"{name}-{dimensions}.sql": (name, dimensions)
    for name in ("dense", "hybrid")
    for dimensions in (384, 3072, 5000)
}
# The settings sent with either statement (hnsw.ef_search's rule among them): no placeholders.
VARIANTS["search_settings.sql"] = ("search_settings", 384)


# The model the kept statements are written for: a name with a quote in it, to show it
# written in as a quoted literal.
MODEL = "example/o'model"


def _render(name: str, dimensions: int) -> str:
    from retrieval import search, statements

    sql, constants = {
        "dense": (
            statements.DENSE_SQL,
            search.dense_constants(model=MODEL, dimensions=dimensions, k=8),
        ),
        "hybrid": (
            statements.HYBRID_SQL,
            search.hybrid_constants(
                model=MODEL, dimensions=dimensions, k=8, fusion=search.Fusion()
            ),
        ),
        "search_settings": (
            statements.SEARCH_SETTINGS_SQL,
            {"hnsw_index": "library_chunk_hnsw_384_x", "ef_search": 40}
            | {"small_index": 120_000, "small_index_ef_search": 100},
        ),
    }[name]
    return statements.render(sql, dimensions=dimensions, constants=constants)


def write() -> None:
    import django

    django.setup()
    for filename, (name, dimensions) in VARIANTS.items():
        (RENDERED / filename).write_text(_render(name, dimensions))


@pytest.mark.parametrize("filename", sorted(VARIANTS))
def test_the_statement_runs_as_kept_beside_the_tests(filename):
    rendered = _render(*VARIANTS[filename])

    assert rendered == (RENDERED / filename).read_text(), (
        f"retrieval/tests/rendered/{filename} is not the statement as it runs; "
        "write them again (this module's docstring) and commit the diff."
    )


@pytest.mark.parametrize("filename", sorted(VARIANTS))
def test_every_placeholder_is_filled(filename):
    rendered = _render(*VARIANTS[filename])

    assert "{" not in rendered.replace("'{", "")
    if filename != "search_settings.sql":
        assert "%(vector)s" in rendered  # the question's values stay parameters


def test_the_model_is_written_in_quoted():
    assert "c.embedding_model = 'example/o''model'" in _render("dense", 384)


def test_the_hnsw_branch_casts_to_the_type_its_index_was_built_on():
    assert "c.embedding::vector(384) <=> %(vector)s::vector(384)" in _render("dense", 384)
    assert "c.embedding::halfvec(3072) <=> %(vector)s::halfvec(3072)" in _render("hybrid", 3072)
    assert "c.embedding::vector(5000) <=> %(vector)s::vector(5000)" in _render("dense", 5000)
