"""What every app's pages do with a form they cannot read.

Each app's forms.py parses what its pages send; a request no page of ours sends (an id that
is not a number, a switch other than its choices, a NUL character that PostgreSQL cannot
store) is answered here. What the shared pages (web/notebook_pages.py) read is parsed here
too: the cited PDF's page turned to.
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


class PageTurnForm(forms.Form):
    """`?page=`: the page of a cited PDF the reader turned to under its passage. A page the
    PDF does not have shows the cited page (web/notebook_pages.py)."""

    page = forms.CharField(required=False, strip=False)

    def turned(self) -> bool:
        """Whether the reader turned a page (htmx then needs that part alone)."""
        return "page" in self.data

    def requested(self) -> str:
        return str(self.cleaned_data["page"]) if self.is_valid() else ""
