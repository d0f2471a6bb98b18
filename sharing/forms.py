"""What the sharing page and the public library send; who the person is and what the role
may be are judged by sharing/services.py. A value no page of ours sends gets 400 naming the
field (web/forms.py, `bad_request`)."""

from __future__ import annotations

from django import forms


class ShareForm(forms.Form):
    person = forms.CharField(required=False, strip=False)  # a user name or an e-mail address
    role = forms.CharField(required=False, strip=False)


class PublicSearchForm(forms.Form):
    """`?q=`: the words the public library is searched for, spaces run together, at most
    200 characters (empty: every public source)."""

    q = forms.CharField(required=False, strip=False)

    def clean_q(self) -> str:
        return " ".join(str(self.cleaned_data["q"]).split())[:200]
