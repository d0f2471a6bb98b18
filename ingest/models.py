from __future__ import annotations

from django.conf import settings
from django.db import models

from notebooks.models import Notebook


class UploadReservation(models.Model):
    """A file the browser was given a signed URL to put straight into the S3 bucket
    (ingest/direct_uploads.py): what it announced, until it confirms the upload (then it
    becomes a source) or the reservation expires (then the object and the row are deleted)."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    notebook = models.ForeignKey(Notebook, on_delete=models.CASCADE, related_name="+")
    # The storage name the object is put at, and the source's file once confirmed.
    key = models.CharField(max_length=500, unique=True)
    filename = models.CharField(max_length=255)
    size = models.BigIntegerField()
    content_type = models.CharField(max_length=200)
    # SHA-256 as the browser computed it; "" when it could not (no Web Crypto on plain http).
    sha256 = models.CharField(max_length=64, blank=True)
    pdf_capture = models.CharField(max_length=20)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    def __str__(self) -> str:
        return self.filename
