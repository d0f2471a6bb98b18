"""Adding sources and turning them into chunks with vectors."""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import User
from django.core.files.base import File
from django.db import IntegrityError, transaction

from ingest.chunker import chunk_passages
from ingest.loaders import detect_kind, load_passages
from ingest.passages import LoaderError
from library.models import Chunk, Source
from notebooks.models import Notebook, NotebookSource
from providers import embeddings
from providers.errors import ProviderError

logger = logging.getLogger(__name__)


class UploadRejected(Exception):
    """The upload cannot become a source; the message says why and what to do."""


@dataclass(frozen=True)
class AddedSource:
    source: Source
    created: bool  # False: the same bytes were already in the owner's library


def _hash_and_size(upload: File) -> tuple[str, int, bytes]:
    digest = hashlib.sha256()
    size = 0
    head = b""
    upload.seek(0)
    for piece in upload.chunks():
        if not head:
            head = piece[:2048]
        digest.update(piece)
        size += len(piece)
        if size > settings.UPLOAD_MAX_BYTES:
            raise UploadRejected(
                f"{upload.name} is larger than {settings.UPLOAD_MAX_BYTES // (1024 * 1024)} MiB "
                "(UPLOAD_MAX_BYTES)."
            )
    upload.seek(0)
    return digest.hexdigest(), size, head


def add_source(*, owner: User, notebook: Notebook, upload: File) -> AddedSource:
    """Store an upload in the owner's library, link it to the notebook and queue it.

    The same bytes from the same owner link the existing source: nothing is stored or
    embedded twice. A source that failed before is queued again, since the cause (a
    model server down, say) may be gone.
    """
    from ingest.tasks import ingest_source

    filename = Path(upload.name or "upload").name
    sha256, size, head = _hash_and_size(upload)
    if size == 0:
        raise UploadRejected(f"{filename} is empty.")
    try:
        kind = detect_kind(filename, head)
    except LoaderError as exc:
        raise UploadRejected(str(exc)) from exc

    with transaction.atomic():
        source = Source.objects.select_for_update().filter(owner=owner, sha256=sha256).first()
        created = source is None
        if source is None:
            source = Source(
                owner=owner,
                kind=kind,
                title=Path(filename).stem or filename,
                filename=filename,
                sha256=sha256,
                size_bytes=size,
            )
            source.file.save(filename, upload, save=False)
            try:
                with transaction.atomic():
                    source.save()
            except IntegrityError:
                # Another request stored the same bytes a moment ago; use theirs.
                source.file.delete(save=False)
                source = Source.objects.get(owner=owner, sha256=sha256)
                created = False
        NotebookSource.objects.get_or_create(notebook=notebook, source=source)
        if created or source.status == Source.Status.FAILED:
            source.status = Source.Status.QUEUED
            source.error = ""
            source.save(update_fields=["status", "error", "updated_at"])
            # Deferred inside the transaction: the job exists exactly when the row does.
            ingest_source.defer(source_id=source.pk)
    return AddedSource(source=source, created=created)


def process_source(*, source_id: int) -> Source:
    """Read, chunk and embed a source; it ends ready, or failed with a reason.

    Chunks and vectors are written in one transaction at the end, so a crash at any
    point leaves either the old chunks or the new ones, never half of them.
    """
    with transaction.atomic():
        source = Source.objects.select_for_update().get(pk=source_id)
        if source.status == Source.Status.READY:
            return source
        source.status = Source.Status.PROCESSING
        source.error = ""
        source.progress_done = source.progress_total = 0
        source.save(
            update_fields=["status", "error", "progress_done", "progress_total", "updated_at"]
        )

    try:
        passages, page_count = load_passages(source.kind, Path(source.file.path))
        drafts = chunk_passages(
            passages, window=settings.CHUNK_TOKENS, overlap=settings.CHUNK_OVERLAP_TOKENS
        )
        if not drafts:
            raise LoaderError("The source contains no words to index.")
        Source.objects.filter(pk=source.pk).update(progress_total=len(drafts))

        def report(done: int, total: int) -> None:
            Source.objects.filter(pk=source.pk).update(progress_done=done)

        model = embeddings.active_model()
        vectors = embeddings.embed_texts(
            [draft.text for draft in drafts], user=source.owner, on_progress=report
        )
        with transaction.atomic():
            Chunk.objects.filter(source=source).delete()
            Chunk.objects.bulk_create(
                Chunk(
                    source=source,
                    ordinal=ordinal,
                    page=draft.page,
                    text=draft.text,
                    char_start=draft.char_start,
                    char_end=draft.char_end,
                    embedding=vector,
                    embedding_model=model,
                )
                for ordinal, (draft, vector) in enumerate(zip(drafts, vectors, strict=True))
            )
            source.status = Source.Status.READY
            source.page_count = page_count
            source.chunk_count = len(drafts)
            source.progress_done = len(drafts)
            source.progress_total = len(drafts)
            source.save()
    except (LoaderError, ProviderError) as exc:
        _fail(source, str(exc))
    except Exception as exc:
        logger.exception("processing source %s failed", source.pk)
        _fail(source, f"Processing failed unexpectedly ({type(exc).__name__}: {exc}).")
    return source


def _fail(source: Source, message: str) -> None:
    source.status = Source.Status.FAILED
    source.error = message
    source.save(update_fields=["status", "error", "updated_at"])
