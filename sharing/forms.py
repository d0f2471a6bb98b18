"""What the sharing page's form sends; who the person is and what the role may be are
judged by sharing/services.py. A value no page of ours sends gets 400 naming the field
(web/forms.py, `bad_request`)."""

from __future__ import annotations

from django import forms


class ShareForm(forms.Form):
    person = forms.CharField(required=False, strip=False)  # a user name or an e-mail address
    role = forms.CharField(required=False, strip=False)
