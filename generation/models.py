"""The generation app's models: generated documents live with the code that makes them
(generation/documents/); the answers' own record is here."""

from __future__ import annotations

from django.db import models

from generation.documents.models import DocumentCitation, GeneratedDocument, SlideRevision
from notebooks.models import Citation

__all__ = ["AttributedCitation", "DocumentCitation", "GeneratedDocument", "SlideRevision"]


class AttributedCitation(models.Model):
    """A citation Loupe placed, not the model: the model wrote a sentence without a marker
    and the support check (generation/verification.py) found it in this passage. The page
    and `ask --json` say so, since the model did not vouch for it."""

    citation = models.OneToOneField(
        Citation, primary_key=True, on_delete=models.CASCADE, related_name="attribution"
    )
