from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from library.models import Preferences


class PreferencesForm(forms.ModelForm):
    class Meta:
        model = Preferences
        fields = ["pdf_capture"]
        help_texts = {
            "pdf_capture": _("How new PDFs are read unless you choose otherwise when uploading."),
        }


class AddToNotebookForm(forms.Form):
    """The notebook a source is added to (none chosen: the view says to choose one), and the
    page to go back to (checked by the view)."""

    notebook = forms.IntegerField(required=False, min_value=1)
    next = forms.CharField(required=False, strip=False)
