"""`manage.py ingest a.txt b.txt` with the same bytes: one source, both lines report it
ready, exit 0 (the second file is linked, not failed)."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from library.models import Source

pytestmark = pytest.mark.django_db(transaction=True)

WORDS = b"The heron waits at the edge of the pond, as still as the reeds around it.\n" * 5


def test_two_files_with_the_same_bytes_both_report_the_ready_source(fake_openai, tmp_path):
    first, second = tmp_path / "a.txt", tmp_path / "b.txt"
    first.write_bytes(WORDS)
    second.write_bytes(WORDS)
    out, err = StringIO(), StringIO()

    call_command(
        "ingest", str(first), str(second), "--user", "u", "--notebook", "N", "--json",
        stdout=out, stderr=err,
    )  # fmt: skip

    a, b = (json.loads(line) for line in out.getvalue().splitlines())
    source = Source.objects.get()
    assert a["name"] == "a.txt" and b["name"] == "b.txt"
    for result in (a, b):
        assert result["source_id"] == source.pk
        assert (result["status"], result["kind"], result["error"]) == ("ready", "text", "")
        assert result["chunks"] == source.chunk_count
    assert "b.txt: already in the library, linked to the notebook." in err.getvalue()
