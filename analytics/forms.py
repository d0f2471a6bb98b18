"""What the analytics pages' links send, read once at the boundary."""

from __future__ import annotations

from django import forms

# The periods the pages offer, in days; any other asks for the default.
PERIODS = (7, 30, 90)
DEFAULT_PERIOD = 30


class PeriodForm(forms.Form):
    """`?days=`: the days the figures cover, one of PERIODS, else DEFAULT_PERIOD."""

    days = forms.CharField(required=False, strip=False)

    def clean_days(self) -> int:
        days = str(self.cleaned_data["days"])
        return int(days) if days.isdigit() and int(days) in PERIODS else DEFAULT_PERIOD

    def period(self) -> int:
        return int(self.cleaned_data["days"]) if self.is_valid() else DEFAULT_PERIOD
