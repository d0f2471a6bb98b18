"""What every app's pages do with a form they cannot read.

Each app's forms.py parses what its pages send; a request no page of ours sends (an id that
is not a number, a switch other than its choices, a NUL character that PostgreSQL cannot
store) is answered here.
"""

from __future__ import annotations

from django import forms
from django.http import HttpResponseBadRequest
from django.utils.translation import gettext as _


def bad_request(form: forms.Form) -> HttpResponseBadRequest:
    """What a request no page of ours sends gets: 400, naming each field and what is wrong."""
    problems = "; ".join(
        f"{field}: {' '.join(str(error) for error in errors)}"
        for field, errors in form.errors.items()
    )
    return HttpResponseBadRequest(
        _("This request cannot be read (%(problems)s). Reload the page and try again.")
        % {"problems": problems},
        content_type="text/plain; charset=utf-8",
    )
