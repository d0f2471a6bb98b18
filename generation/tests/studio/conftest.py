"""Sources and helpers for the studio's tests: two short documents with headings, figures
and dates, read into a notebook through the normal pipeline."""

from __future__ import annotations

import json

import pytest

from generation.documents.models import GeneratedDocument
from generation.documents.services import generate_document, request_document

HERONS = b"""# Grey herons

Grey herons live along rivers, lakes and coasts across Europe and Asia.
The population in Britain grew by 25 % between 1990 and 2020.
A grey heron stands about 95 cm tall and weighs up to 2 kg.

## Breeding

Herons breed in colonies called heronries, often high in tall trees.
The largest British heronry held 200 nests in 2019.
Each pair lays three to five eggs in March.
"""

TRAINS = b"""# Night trains

The night train from Vienna to Hamburg leaves at 20:15 and arrives the next morning.
In 2016 the Austrian railway bought the sleeper services that Germany gave up.
Since then passenger numbers rose to 1.4 million a year by 2019.

## Comfort

Sleeper cabins hold one to three beds and include breakfast.
Couchettes are cheaper, with four or six berths per compartment.
"""


@pytest.fixture
def studio_sources(settings, notebook, add_ready_source):
    """Two ready sources in the notebook (embedded by whichever model the test selects), in
    chunks of 30 tokens, so that each source gives the generators several passages."""
    settings.CHUNK_TOKENS, settings.CHUNK_OVERLAP_TOKENS = 30, 5
    return [
        add_ready_source(notebook, HERONS, "herons.md"),
        add_ready_source(notebook, TRAINS, "trains.md"),
    ]


@pytest.fixture
def make_document(owner, notebook):
    """Queue a document and run its job here, as the worker would; returns it reloaded."""

    def make(kind: str, language: str = "") -> GeneratedDocument:
        document = request_document(user=owner, notebook=notebook, kind=kind, language=language)
        generate_document(document_id=document.pk)
        document.refresh_from_db()
        return document

    return make


def reply(data: dict) -> str:
    return json.dumps(data)
