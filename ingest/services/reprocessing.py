"""Reading a source again: a failed one retried, a ready one re-processed."""

from __future__ import annotations

from django.db import transaction
from django.utils.translation import gettext as _

from library.models import Source
from ops import recovery
from texts.errors import UserFacingError


class SourceBusy(UserFacingError):
    """The source is already queued or processing."""


def reprocess_source(*, source: Source) -> Source:
    """Queue a source to be read again: a failed one is retried, a ready one re-processed.

    While it is queued and processed it is not searched; its old chunks are replaced by the
    new ones in one transaction, or kept (unsearched) if reading it fails again.
    """
    from ingest.tasks import ingest_source

    with transaction.atomic():
        source = Source.objects.select_for_update().get(pk=source.pk)
        # Busy only while a live job holds it: one whose worker died, or that ended without
        # finishing it, must not keep it "processing" for good (ops/recovery.py).
        if not source.is_finished and recovery.is_held(source):
            raise SourceBusy(_("“%(title)s” is already being processed.") % {"title": source.title})
        recovery.release_dead_jobs(source)
        source.status = Source.Status.QUEUED
        source.error = ""
        source.save(update_fields=["status", "error", "updated_at"])
        ingest_source.defer(source_id=source.pk)
    return source
