from __future__ import annotations

from django import forms

from library.models import Preferences


class PreferencesForm(forms.ModelForm):
    class Meta:
        model = Preferences
        fields = ["pdf_capture"]
        help_texts = {
            "pdf_capture": "How new PDFs are read unless you choose otherwise when uploading.",
        }
