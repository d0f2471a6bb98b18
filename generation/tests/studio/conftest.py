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


def is_mp3(data: bytes) -> bool:
    return data[:3] == b"ID3" or (data[0] == 0xFF and data[1] & 0xE0 == 0xE0)


def deck_slide(heading: str, *bullets: str, notes: str = "") -> dict:
    return {"heading": heading, "bullets": list(bullets), "notes": notes or f"About {heading}."}


# Six slides of three bullets, each a sentence of the sources with the marker of its passage.
DECK = {
    "title": "Herons and night trains",
    "slides": [
        deck_slide(
            "Grey herons",
            "Grey herons live along rivers, lakes and coasts across Europe and Asia [1].",
            "The population in Britain grew by 25 % between 1990 and 2020 [1].",
            "A grey heron stands about 95 cm tall and weighs up to 2 kg [2].",
            notes="Grey herons are large birds of rivers and coasts.",
        ),
        deck_slide(
            "Breeding",
            "Herons breed in colonies called heronries, often high in tall trees [3].",
            "The largest British heronry held 200 nests in 2019 [3].",
            "Each pair lays three to five eggs in March [3].",
        ),
        deck_slide(
            "Heron figures",
            "A grey heron weighs up to 2 kg [2].",
            "The largest British heronry held 200 nests [3].",
            "Each pair lays three to five eggs [3].",
        ),
        deck_slide(
            "Night trains",
            "The night train from Vienna to Hamburg leaves at 20:15 [5].",
            "It arrives the next morning [5].",
            "In 2016 the Austrian railway bought the sleeper services that Germany gave up [5].",
        ),
        deck_slide(
            "Passengers",
            "Passenger numbers rose to 1.4 million a year by 2019 [6].",
            "The Austrian railway bought the sleeper services in 2016 [5].",
            "The night train from Vienna arrives in Hamburg the next morning [5].",
        ),
        deck_slide(
            "Comfort",
            "Sleeper cabins hold one to three beds and include breakfast [7].",
            "Couchettes are cheaper [7].",
            "Couchettes have four or six berths per compartment [7].",
        ),
    ],
}


REPLIES = {
    "report": {
        "title": "Herons and night trains",
        "markdown": "## Herons\n\nBritain's herons grew by 25 % [1]. They nest in colonies [2].\n\n"
        "## Trains\n\nThe Vienna night train leaves at 20:15 [3][9].",
    },
    "quiz": {
        "title": "What do you remember?",
        "questions": [
            {
                "type": "multiple_choice",
                "question": "How tall is a grey heron?",
                "options": ["50 cm", "95 cm", "2 m"],
                "answer_index": 1,
                "explanation": "A grey heron stands about 95 cm tall [1].",
            },
            {
                "type": "short_answer",
                "question": "Where do herons breed?",
                "answer": "in colonies called heronries",
                "explanation": "Herons breed in colonies called heronries [2].",
            },
        ],
    },
    "table": {
        "title": "Figures",
        "columns": ["What", "Value"],
        "rows": [
            {"cells": ["Heron height", "95 cm"], "source": "[1]"},
            {"cells": ["Night train passengers (2019)", "1.4 million"], "source": "[3]"},
        ],
    },
    "mindmap": {
        "title": "Notebook map",
        "root": {
            "label": "Herons and trains",
            "children": [
                {"label": "Herons", "children": [{"label": "Breeding", "children": []}]},
                {"label": "Night trains", "children": []},
            ],
        },
    },
    "infographic": {
        "title": "In numbers",
        "figures": [{"value": "25 %", "label": "growth of British herons", "source": "[1]"}],
        "timeline": [{"date": "2016", "event": "Austria buys the sleepers", "source": "[3]"}],
        "comparisons": [
            {
                "title": "Berths per compartment",
                "unit": "berths",
                "source": "[3]",
                "items": [{"label": "Couchette", "value": 6}, {"label": "Sleeper", "value": 3}],
            }
        ],
    },
    "slides": DECK,
}
