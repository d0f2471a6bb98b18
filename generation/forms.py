"""What the studio's forms send, parsed once at the boundary.

The words (a document's kind, its language, a slide's instruction, a quiz answer) are judged
by the service that uses them, whose message the API and the commands give too. A value no
page of ours sends gets 400 naming the field (web/forms.py, `bad_request`).
"""

from __future__ import annotations

from typing import Any

from django import forms


class DocumentForm(forms.Form):
    """A document asked for in the studio panel. The panel always sends the audio and video
    options; each means something only for its own kind."""

    kind = forms.CharField(required=False, strip=False)
    language = forms.CharField(required=False, strip=False)
    audio_format = forms.CharField(required=False, strip=False)
    length = forms.CharField(required=False, strip=False)
    video_format = forms.CharField(required=False, strip=False)


class DeleteForm(forms.Form):
    """Where the delete button was: `from=panel`, the studio panel (shown again); none, the
    document's own page (back to the notebook)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Declared here: the page's field is named `from`, a Python keyword.
        self.fields["from"] = forms.ChoiceField(
            choices=[("", ""), ("panel", "panel")], required=False
        )


class RevisionForm(forms.Form):
    instruction = forms.CharField(required=False, strip=False)


class QuizAnswerForm(forms.Form):
    answer = forms.CharField(required=False, strip=False)


class DocumentPageForm(forms.Form):
    """`?part=status`: the part of a document's page that is polled while it is being made
    (anything else: the whole page)."""

    part = forms.CharField(required=False, strip=False)

    def polled(self) -> bool:
        return self.is_valid() and self.cleaned_data["part"] == "status"


class _NamedSwitch(forms.CheckboxInput):
    """On whenever its name is in the query, with a value or without: `?download`."""

    def value_from_datadict(self, data: Any, files: Any, name: str) -> bool:
        return name in data


class MediaForm(forms.Form):
    """`?download`: an overview's sound or film as a file to keep, not played in the page."""

    download = forms.BooleanField(required=False, widget=_NamedSwitch)

    def as_attachment(self) -> bool:
        return self.is_valid() and bool(self.cleaned_data["download"])
