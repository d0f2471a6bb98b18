"""A right-to-left override (U+202E) makes `report<RLO>fdp.exe` show as `reportexe.pdf`.
A browser's upload loses it (Django's multipart parser keeps printable characters only);
the command line and the services do the same, and pages isolate names and titles so that
one cannot reorder the text around it."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.files.base import ContentFile
from django.core.management import call_command

from ingest.services import add_source
from library.models import Source
from notebooks.models import Notebook

RLO = "\u202e"
WORDS = b"The heron waits at the edge of the pond, as still as the reeds around it.\n" * 5


def test_an_added_file_loses_its_bidirectional_controls(owner, notebook):
    source = add_source(
        owner=owner, notebook=notebook, upload=ContentFile(WORDS, name=f"report{RLO}txt.md")
    ).source

    assert (source.filename, source.title) == ("reporttxt.md", "reporttxt")


@pytest.mark.django_db(transaction=True)
def test_the_ingest_command_keeps_no_override_in_names_or_titles(fake_openai, tmp_path):
    path = tmp_path / f"notes{RLO}txt.md"
    path.write_bytes(WORDS)
    out = StringIO()

    call_command(
        "ingest", str(path), "--user", "u", "--notebook", f"Research{RLO}", "--json",
        stdout=out, stderr=StringIO(),
    )  # fmt: skip

    [result] = [json.loads(line) for line in out.getvalue().splitlines()]
    source = Source.objects.get()
    assert result["name"] == "notestxt.md"
    assert (source.filename, source.title) == ("notestxt.md", "notestxt")
    assert Notebook.objects.get().title == "Research"


def test_pages_isolate_titles_a_person_wrote(client, owner, notebook):
    # A title from the web form keeps what its author typed, right-to-left text included;
    # shown isolated, it cannot reorder the words around it.
    notebook.title = f"מחקר {RLO}Research"
    notebook.save()
    add_source(owner=owner, notebook=notebook, upload=ContentFile(WORDS, name="שלום.txt"))
    client.force_login(owner)

    page = client.get(f"/notebooks/{notebook.pk}/").content.decode()
    listing = client.get("/notebooks/").content.decode()
    library = client.get("/library/").content.decode()

    assert f'<h1 dir="auto">{notebook.title}</h1>' in page
    assert '<span class="source-title" dir="auto">שלום</span>' in page
    assert f'dir="auto">{notebook.title}</a>' in listing
    assert '<span class="source-title" dir="auto">שלום</span>' in library
