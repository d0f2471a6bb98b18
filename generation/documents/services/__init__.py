"""Making generated documents: queued by a person, written by a worker, then indexed as a
source of kind "generated" so they can be asked about like any other.

requesting.py       a document asked for, made again or deleted; a command waiting for one
making.py           the worker's part: written by the model or from the sources' own words,
                    its citations stored, then indexed
writing.py          the chat model's part: in one call or a passage at a time, in the
                    language asked for
media.py            an audio overview's MP3, a deck's PPTX and PDF, a video's MP4
slide_revisions.py  one slide of a ready deck rewritten as its reader asks
ready.py            a quiz answer checked, a table as CSV, a drawing as SVG
"""

from __future__ import annotations

from generation.documents.services.making import generate_document
from generation.documents.services.ready import (
    NoSuchQuestion,
    QuizResult,
    check_quiz_answer,
    document_svg,
    table_csv,
)
from generation.documents.services.requesting import (
    DocumentBusy,
    NoSourceChosen,
    delete_document,
    request_document,
    retry_document,
    wait_for_document,
)
from generation.documents.services.slide_revisions import (
    NoSuchSlide,
    RevisionBusy,
    request_slide_revision,
    revise_slide,
)
from generation.documents.services.writing import LANGUAGES

__all__ = [
    "LANGUAGES",
    "DocumentBusy",
    "NoSourceChosen",
    "NoSuchQuestion",
    "NoSuchSlide",
    "QuizResult",
    "RevisionBusy",
    "check_quiz_answer",
    "delete_document",
    "document_svg",
    "generate_document",
    "request_document",
    "request_slide_revision",
    "retry_document",
    "revise_slide",
    "table_csv",
    "wait_for_document",
]
