from __future__ import annotations

from django import forms


class FactForm(forms.Form):
    """A fact as the notebook page sends it. Its words are checked by memory.services (the
    chat's /remember sends the same words), so an empty or long one reads the same there."""

    text = forms.CharField(required=False, strip=True)
    everywhere = forms.BooleanField(required=False)
