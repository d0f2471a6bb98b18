from __future__ import annotations

from django import forms


class ReserveForm(forms.Form):
    """A direct upload's announcement; its values are judged by direct_uploads.reserve_upload."""

    filename = forms.CharField(max_length=255)
    size = forms.IntegerField()
    content_type = forms.CharField(max_length=200, required=False)
    sha256 = forms.CharField(max_length=64, required=False)
    pdf_capture = forms.CharField(max_length=20, required=False)
