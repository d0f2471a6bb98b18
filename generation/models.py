"""The generation app's models live with the code that makes them (generation/documents/)."""

from __future__ import annotations

from generation.documents.models import DocumentCitation, GeneratedDocument

__all__ = ["DocumentCitation", "GeneratedDocument"]
