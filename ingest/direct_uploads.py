"""Uploads straight into the S3 bucket (with S3_BUCKET): the browser reserves a file (name,
size, type, its SHA-256 when it can compute one) and gets a signed URL, puts the file there
itself, so a large file never passes through a web request, then confirms. The confirm
checks what arrived (its size and type as announced, its bytes a kind Loupe reads, its
SHA-256 as announced) before the source is stored and queued; a reservation never
confirmed is deleted with its object (delete_abandoned_uploads, every ten minutes).
Without S3 uploads go through the web process (adding.py), and these are refused."""

from __future__ import annotations

import hashlib
import re
import uuid
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.files.storage import default_storage
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from ingest.loaders import detect_kind
from ingest.models import UploadReservation
from ingest.passages import LoaderError
from ingest.services.adding import AddedSource, UploadRejected, link_and_queue, printable_name
from library.models import Source
from notebooks.models import Notebook

SHA256 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class Reserved:
    reservation: UploadReservation
    url: str  # where to PUT the file, signed, until S3_URL_EXPIRE_SECONDS
    headers: dict[str, str]  # the headers the PUT must send (they are signed)


def available() -> bool:
    return bool(settings.S3_BUCKET)


def _client_and_key(key: str) -> tuple[Any, str, str]:
    """The bucket's boto3 client, the bucket and the object's full key (with S3_PREFIX)."""
    storage: Any = default_storage
    return storage.connection.meta.client, storage.bucket_name, storage._normalize_name(key)


def reserve_upload(
    *,
    owner: User,
    notebook: Notebook,
    filename: str,
    size: int,
    content_type: str,
    sha256: str = "",
    pdf_capture: str = "",
) -> Reserved:
    """Reserve a place in the bucket for one file and sign a PUT to it."""
    if not available():
        raise UploadRejected(_("Direct uploads need S3 storage (S3_BUCKET); upload the file."))
    name = printable_name(filename)
    if not name:
        raise UploadRejected(_("The file has no name."))
    if size <= 0:
        raise UploadRejected(_("%(name)s is empty.") % {"name": name})
    if size > settings.UPLOAD_MAX_BYTES:
        raise UploadRejected(
            _("%(name)s is larger than %(mib)s MiB (UPLOAD_MAX_BYTES).")
            % {"name": name, "mib": settings.UPLOAD_MAX_BYTES // (1024 * 1024)}
        )
    sha256 = sha256.strip().lower()
    if sha256 and not SHA256.fullmatch(sha256):
        raise UploadRejected(_("The SHA-256 of %(name)s is not 64 hex digits.") % {"name": name})
    pdf_capture = pdf_capture or Source.PdfCapture.AUTO
    if pdf_capture not in Source.PdfCapture.values:
        raise UploadRejected(
            f"Unknown PDF capture mode {pdf_capture!r}; use one of "
            f"{', '.join(Source.PdfCapture.values)}."
        )
    content_type = content_type.strip() or "application/octet-stream"
    reservation = UploadReservation.objects.create(
        owner=owner,
        notebook=notebook,
        key=f"sources/direct/{uuid.uuid4().hex}/{name}",
        filename=name,
        size=size,
        content_type=content_type,
        sha256=sha256,
        pdf_capture=pdf_capture,
    )
    client, bucket, key = _client_and_key(reservation.key)
    # Size and type are signed: S3 refuses a PUT whose Content-Length or Content-Type
    # differ. The confirm checks them again (not every S3-compatible server enforces it).
    url = client.generate_presigned_url(
        "put_object",
        Params={"Bucket": bucket, "Key": key, "ContentType": content_type, "ContentLength": size},
        ExpiresIn=settings.S3_URL_EXPIRE_SECONDS,
    )
    return Reserved(reservation=reservation, url=url, headers={"Content-Type": content_type})


def _refuse(reservation: UploadReservation, message: str) -> UploadRejected:
    """Forget what arrived and the reservation: the person uploads again."""
    default_storage.delete(reservation.key)
    reservation.delete()
    return UploadRejected(message)


def confirm_upload(*, reservation: UploadReservation) -> AddedSource:
    """Check what arrived at the reservation's key, then store it as a source and queue it
    (or link the owner's source with the same bytes, and delete the object)."""
    name = reservation.filename
    client, bucket, key = _client_and_key(reservation.key)
    try:
        head = client.head_object(Bucket=bucket, Key=key)
    except client.exceptions.ClientError as exc:
        if exc.response.get("Error", {}).get("Code") not in ("404", "NoSuchKey", "NotFound"):
            raise
        raise UploadRejected(
            _("%(name)s has not arrived in storage yet: upload it, then confirm.") % {"name": name}
        ) from exc
    if head["ContentLength"] != reservation.size:
        raise _refuse(
            reservation,
            _("%(name)s arrived with %(got)s bytes, not the %(size)s announced: upload it again.")
            % {"name": name, "got": head["ContentLength"], "size": reservation.size},
        )
    if head.get("ContentType", "") != reservation.content_type:
        raise _refuse(
            reservation,
            _("%(name)s arrived as %(got)s, not the %(type)s announced: upload it again.")
            % {"name": name, "got": head.get("ContentType", "?"), "type": reservation.content_type},
        )
    # Read back from the bucket by the server, not through a request: its hash and the
    # first bytes that tell its kind.
    digest, first = hashlib.sha256(), b""
    with default_storage.open(reservation.key, "rb") as stored:
        for piece in stored.chunks():
            first = first or piece[:2048]
            digest.update(piece)
    sha256 = digest.hexdigest()
    if reservation.sha256 and sha256 != reservation.sha256:
        raise _refuse(
            reservation,
            _(
                "%(name)s arrived changed (its SHA-256 differs from the one announced): "
                "upload it again."
            )
            % {"name": name},
        )
    try:
        kind = detect_kind(name, first)
    except LoaderError as exc:
        raise _refuse(reservation, str(exc)) from exc
    owner, notebook = reservation.owner, reservation.notebook
    with transaction.atomic():
        source = Source.objects.select_for_update().filter(owner=owner, sha256=sha256).first()
        created = source is None
        if source is None:
            source = Source(
                owner=owner,
                kind=kind,
                pdf_capture=reservation.pdf_capture,
                title=Path(name).stem or name,
                filename=name,
                sha256=sha256,
                size_bytes=reservation.size,
            )
            source.file.name = reservation.key  # already in the bucket: not copied
            try:
                with transaction.atomic():
                    source.save()
            except IntegrityError:
                source = Source.objects.get(owner=owner, sha256=sha256)
                created = False
        if not created:
            default_storage.delete(reservation.key)
        link_and_queue(source, notebook=notebook, created=created)
        reservation.delete()
    return AddedSource(source=source, created=created)


def delete_abandoned_uploads() -> int:
    """Delete the reservations never confirmed, whose signed URL has expired (with an hour
    for a slow upload's last bytes), and whatever arrived for them; how many."""
    cutoff = timezone.now() - timedelta(seconds=settings.S3_URL_EXPIRE_SECONDS + 3600)
    count = 0
    for reservation in UploadReservation.objects.filter(created_at__lt=cutoff):
        if available():
            default_storage.delete(reservation.key)
        reservation.delete()
        count += 1
    return count
