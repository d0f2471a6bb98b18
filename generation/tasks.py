from __future__ import annotations

from django.conf import settings
from procrastinate import JobContext
from procrastinate.contrib.django import app

from generation.documents import services
from generation.documents.models import GeneratedDocument, SlideRevision
from ops.database import wait_for_database
from ops.jobs import TRANSIENT_RETRY


# A model server that is down or rate-limiting, or a database that went away, fails the
# attempt, not the document: the job runs again with backoff (ops.jobs); the last attempt
# fails the document with the reason.
@app.task(queue="generate", retry=TRANSIENT_RETRY, pass_context=True)
def generate_document(context: JobContext, *, document_id: int) -> None:
    wait_for_database(seconds=settings.DATABASE_WAIT_SECONDS)
    if not GeneratedDocument.objects.filter(pk=document_id).exists():
        return  # deleted while it waited in the queue
    services.generate_document(
        document_id=document_id, raise_transient=TRANSIENT_RETRY.retries_left(context.job)
    )


@app.task(queue="generate", retry=TRANSIENT_RETRY, pass_context=True)
def revise_slide(context: JobContext, *, revision_id: int) -> None:
    wait_for_database(seconds=settings.DATABASE_WAIT_SECONDS)
    if not SlideRevision.objects.filter(pk=revision_id).exists():
        return  # its deck was deleted while it waited in the queue
    services.revise_slide(
        revision_id=revision_id, raise_transient=TRANSIENT_RETRY.retries_left(context.job)
    )
