"""Offline documents made from a real 261-page manual (../shared/data/manual-qa) read as a
person would want them: the mind map is the manual's own outline."""

from __future__ import annotations

import re

import pytest

from generation.documents.models import GeneratedDocument
from ingest.tests.data import MANUAL, outline_chapters


@pytest.fixture
def manual(fake_openai, settings, notebook, add_ready_source):
    settings.CHAT_MODEL = ""  # offline generators
    return add_ready_source(notebook, MANUAL.read_bytes(), MANUAL.name)


def test_the_mind_map_of_a_manual_is_its_chapters_and_their_sections(manual, make_document):
    document = make_document("mindmap")

    assert document.status == GeneratedDocument.Status.READY, document.error
    (branch,) = document.data["root"]["children"]
    chapters = [child["label"] for child in branch["children"]]
    assert chapters == outline_chapters()
    first = branch["children"][0]
    assert [child["label"] for child in first["children"]][:2] == [
        "Console basics",
        "Unix-like filesystem",
    ]
    labels = [leaf["label"] for chapter in branch["children"] for leaf in chapter["children"]]
    assert labels
    for label in chapters + labels:
        assert len(label) <= 60
        assert not re.fullmatch(r"[\d.\s]+", label)  # never a bare section number
        assert "Debian Reference" not in label  # never the running header
