"""The generation app's models: generated documents live with the code that makes them
(generation/documents/); an answer's citations are notebooks', all of them of the family
in citations/models.py."""

from __future__ import annotations

from generation.documents.models import DocumentCitation, GeneratedDocument, SlideRevision

__all__ = ["DocumentCitation", "GeneratedDocument", "SlideRevision"]
