"""What a sign-in attempt is counted by, read once at the boundary: the user name it names.
Whether the name and password are right is Django's AuthenticationForm's question."""

from __future__ import annotations

from django import forms


class SignInAttemptForm(forms.Form):
    """The user name as its failures are counted: trimmed, in lower case, at most as long as
    a user name may be, so that "Ada", "ada " and "ADA" share one count."""

    username = forms.CharField(required=False)

    def clean_username(self) -> str:
        return str(self.cleaned_data["username"]).lower()[:150]
