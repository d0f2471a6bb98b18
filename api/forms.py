"""What the tokens page's form sends; the name and the scope are judged by
api/tokens.create_token, whose message the page shows. A value no page of ours sends gets
400 naming the field (web/forms.py, `bad_request`)."""

from __future__ import annotations

from django import forms

from api.models import AccessToken


class TokenForm(forms.Form):
    name = forms.CharField(required=False, strip=False)
    scope = forms.CharField(required=False, strip=False)

    def clean_scope(self) -> str:
        # A request without a scope (a hand-written one) asks for the lesser, reading.
        if "scope" not in self.data:
            return AccessToken.Scope.READ
        return str(self.cleaned_data["scope"])
