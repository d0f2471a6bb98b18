"""Adding an upload to its owner's library: the same bytes are stored and embedded once."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import User
from django.core.files.base import ContentFile, File
from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from ingest.loaders import detect_kind
from ingest.passages import LoaderError
from library.models import Source
from notebooks.models import Notebook, NotebookSource
from ops import recovery
from texts.errors import UserFacingError


class UploadRejected(UserFacingError):
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
                _("%(name)s is larger than %(mib)s MiB (UPLOAD_MAX_BYTES).")
                % {"name": upload.name, "mib": settings.UPLOAD_MAX_BYTES // (1024 * 1024)}
            )
    upload.seek(0)
    return digest.hexdigest(), size, head


def printable_name(name: str) -> str:
    """A file name as a browser's upload arrives (Django's multipart parser): no folders,
    no unprintable characters. Among those are the bidirectional controls: a right-to-left
    override (U+202E) before "fdp.exe" shows the name of a program as one ending ".pdf"."""
    name = Path(name.replace("\\", "/")).name
    name = "".join(char for char in name if char.isprintable())
    return "" if name in {".", ".."} else name


def add_source(
    *, owner: User, notebook: Notebook, upload: File, pdf_capture: str | None = None
) -> AddedSource:
    """Store an upload in the owner's library, link it to the notebook and queue it.

    `pdf_capture` (text, vision or auto; None: auto) is how a new PDF source is read.

    The same bytes from the same owner link the existing source: nothing is stored or
    embedded twice. A source that failed before is queued again, since the cause (a
    model server down, say) may be gone.
    """

    filename = printable_name(upload.name or "") or "upload"
    sha256, size, head = _hash_and_size(upload)
    if size == 0:
        raise UploadRejected(_("%(name)s is empty.") % {"name": filename})
    try:
        kind = detect_kind(filename, head)
    except LoaderError as exc:
        raise UploadRejected(str(exc)) from exc
    pdf_capture = pdf_capture or Source.PdfCapture.AUTO
    if pdf_capture not in Source.PdfCapture.values:
        raise UploadRejected(
            f"Unknown PDF capture mode {pdf_capture!r}; use one of "
            f"{', '.join(Source.PdfCapture.values)}."
        )

    with transaction.atomic():
        source = Source.objects.select_for_update().filter(owner=owner, sha256=sha256).first()
        if source is None:
            source = _web_source_with_bytes(owner=owner, sha256=sha256, size=size)
        created = source is None
        if source is None:
            source = Source(
                owner=owner,
                kind=kind,
                pdf_capture=pdf_capture,
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
        link_and_queue(source, notebook=notebook, created=created)
    return AddedSource(source=source, created=created)


def _web_source_with_bytes(*, owner: User, sha256: str, size: int) -> Source | None:
    """The owner's fetched web source whose file has exactly these bytes, if any.

    Web sources are keyed by their address (there are no bytes when one is added), so
    their content is found by size first and then compared by hash: few files share a size.
    """
    candidates = Source.objects.filter(owner=owner, kind=Source.Kind.URL, size_bytes=size)
    for candidate in candidates.exclude(file=""):
        digest = hashlib.sha256()
        try:
            with candidate.file.open("rb") as stored:
                for piece in stored.chunks():
                    digest.update(piece)
        except OSError:
            continue  # its file is gone; it cannot be the same bytes
        if digest.hexdigest() == sha256:
            return Source.objects.select_for_update().get(pk=candidate.pk)
    return None


def link_and_queue(source: Source, *, notebook: Notebook, created: bool) -> None:
    """Link the source to the notebook; queue it if new, or again if it failed before.

    Called inside the caller's transaction: the job exists exactly when the row does.
    """
    from ingest.tasks import ingest_source

    # The owner's own link (live whatever becomes of a publication, sharing/access.py).
    NotebookSource.objects.update_or_create(
        notebook=notebook, source=source, defaults={"added_by_id": source.owner_id}
    )
    # Unfinished with no live job (its worker died, or its job ended without finishing it):
    # queued again too, rather than "already in the library" for good.
    stuck = not created and not source.is_finished and not recovery.is_held(source)
    if created or source.status == Source.Status.FAILED or stuck:
        if stuck:
            recovery.release_dead_jobs(source)
        source.status = Source.Status.QUEUED
        source.error = ""
        source.save(update_fields=["status", "error", "updated_at"])
        ingest_source.defer(source_id=source.pk)


def add_markdown_source(
    *, owner_id: int, notebook_id: int, kind: str, title: str, key: str, filename: str, text: str
) -> Source:
    """A source of Loupe's own Markdown (a note, a generated document) in one notebook,
    queued; the caller runs it (or defers it) and calls this inside its own transaction,
    beside the removal of the source the text replaces. Keyed by `key` (what it was made
    from), not by its text: two notes or documents may say the same, and each is its own."""
    data = text.encode()
    source = Source(
        owner_id=owner_id,
        kind=kind,
        title=title[:500],
        filename=filename,
        sha256=hashlib.sha256(key.encode()).hexdigest(),
        size_bytes=len(data),
        status=Source.Status.QUEUED,
    )
    source.file.save(filename, ContentFile(data), save=False)
    source.save()
    NotebookSource.objects.create(notebook_id=notebook_id, source=source, added_by_id=owner_id)
    return source
