from __future__ import annotations

from typing import Any

from django import template
from django.urls import reverse

from ingest.direct_uploads import available

register = template.Library()


@register.simple_tag
def direct_upload_url(notebook: Any) -> str:
    """Where the page's script reserves a direct upload to S3; "" without S3 (the file is
    posted to the upload view, as without JavaScript)."""
    return reverse("uploads:reserve", args=[notebook.pk]) if available() else ""
