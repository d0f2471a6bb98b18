"""The citation family: what every [n] points at, in an answer (notebooks' Citation), a note
(NoteCitation) or a studio document (generation's DocumentCitation). Each kind is a table of
its own beside the row it belongs to; the fields they share, and what a reader is shown of
them, are defined here once."""

from __future__ import annotations

from django.db import models

from library.models import Chunk, Source


class CitedPassage(models.Model):
    """What an [n] points at: the chunk retrieved for it, kept with a copy of the quote so
    the citation still reads correctly if the chunk is later replaced. Every kind cites
    alike, is verified alike (citations/verification.py) and opens in the same passage
    panel."""

    n = models.PositiveIntegerField()
    chunk = models.ForeignKey(Chunk, null=True, on_delete=models.SET_NULL, related_name="+")
    source = models.ForeignKey(Source, null=True, on_delete=models.SET_NULL, related_name="+")
    source_title = models.CharField(max_length=500)
    page = models.PositiveIntegerField(null=True, blank=True)
    # The sentence of the chunk that best supports the citing claim, verbatim.
    quote = models.TextField()
    similarity = models.FloatField()
    # Whether every sentence citing [n] is supported by the quote (citations/verification);
    # None for citations stored before the check existed.
    supported = models.BooleanField(null=True)
    support_score = models.FloatField(null=True)
    # Placed by Loupe, not the model: the model gave the claim no marker and the support
    # check found it in this passage; the pages say so, since the model did not vouch for it.
    attributed = models.BooleanField(default=False)

    class Meta:
        abstract = True

    @property
    def page_label(self) -> str:
        """The page number printed on the cited page ("xii", "5"), a slide's or a sheet's
        place ("slide 7", "rows 12–40"); "" when there is none or the chunk was replaced."""
        return self.chunk.page_label if self.chunk is not None else ""

    @property
    def section(self) -> list[str]:
        """The headings the cited passage sits under, outermost first; [] when the document
        shows none or the chunk was replaced."""
        return [str(part) for part in self.chunk.section] if self.chunk is not None else []
