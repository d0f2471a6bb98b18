"""What the notebook page's forms send, parsed once at the boundary.

The forms only read: what the words may be (an empty question, a chat style that does not
exist) is judged by the service that uses them, whose message the API and the commands give
too. A value no page of ours sends (an id that is not a number, a flag other than 0 or 1)
comes from a hand-made request: it gets 400 naming the field (web/forms.py, `bad_request`).
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext as _


class RowIdField(forms.CharField):
    """The id of a row the page listed (a conversation, a source): digits, or empty for none.
    Whether it names a row the person may use is the view's question (404 if not)."""

    def to_python(self, value: Any) -> int | None:  # type: ignore[override]
        text = super().to_python(value)
        if not text:
            return None
        if not text.isdecimal():
            raise forms.ValidationError(
                _("Expected a number, the id of one of the notebook's rows.")
            )
        return int(text)


class RowIdsField(forms.Field):
    """Several row ids (the ticked sources); none ticked is an empty list."""

    widget = forms.MultipleHiddenInput

    def to_python(self, value: Any) -> list[int]:
        values = [str(item).strip() for item in value or []]
        if not all(item.isdecimal() for item in values):
            raise forms.ValidationError(
                _("Expected a number, the id of one of the notebook's rows.")
            )
        return [int(item) for item in values]


# A switch the page sends as 0 or 1 (hidden inputs beside its buttons).
ZERO_OR_ONE = [("0", "0"), ("1", "1")]


class TitleForm(forms.Form):
    """A new notebook's title, or a conversation's (empty: named by its first question)."""

    title = forms.CharField(required=False, strip=False)


class UploadForm(forms.Form):
    """The files come in request.FILES; the capture mode is judged by add_source."""

    pdf_capture = forms.CharField(required=False, strip=False)


class WebPageForm(forms.Form):
    url = forms.CharField(required=False, strip=False)  # judged (and stripped) by add_url


class AskForm(forms.Form):
    question = forms.CharField(required=False, strip=False)
    conversation = RowIdField(required=False)  # none: the question starts one
    source = RowIdField(required=False)  # "Ask about this": the one source asked


class AboutForm(forms.Form):
    """The notebook page's `?about=`: the source an "Ask about this" question is limited to."""

    about = RowIdField(required=False)


class ChooseForm(forms.Form):
    """The sources ticked, or the "all" or "none" button."""

    ticked = RowIdsField(required=False)
    all = forms.BooleanField(required=False)
    none = forms.BooleanField(required=False)


class ChatStyleForm(forms.Form):
    goal = forms.CharField(required=False, strip=False)
    length = forms.CharField(required=False, strip=False)
    instructions = forms.CharField(required=False, strip=False)
    next = forms.CharField(
        required=False, strip=False
    )  # the page to go back to, checked by the view


class NoteForm(forms.Form):
    content = forms.CharField(required=False, strip=False)
    title = forms.CharField(required=False, strip=False)


class PostForm(forms.Form):
    """Post a conversation or a note to the notebook (1), or make it private again (0)."""

    posted = forms.ChoiceField(choices=ZERO_OR_ONE)


class NoteSourceForm(forms.Form):
    """Make a note a source of the notebook (1), or a note only again (0)."""

    source = forms.ChoiceField(choices=ZERO_OR_ONE)
