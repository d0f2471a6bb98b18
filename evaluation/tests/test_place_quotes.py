"""A place-gold quote is found in a chunk verbatim; a sheet's number, quoted as stored
(0.139), is also found as the sheet shows it (13.9%), to the shown precision only."""

from __future__ import annotations

import pytest

from evaluation.places import PlaceItem, holds
from library.models import Chunk


def _item(quote, where):
    return PlaceItem(id="q", file="f.xlsx", lang="en", question="?", quote=quote, where=where)


@pytest.mark.parametrize(
    ("quote", "text"),
    [
        ("0.139", "| 15,000 | 9,451 | 13.9% |"),
        ("1414", "| $3,750 | $2,336 | $1,414 |"),
        ("198905700", "| 25.40° | 70.47° | 198,905,700 |"),
        ("0.6229333", "| Item | Amount | 62% |"),
        ("-800", "| Rent | $(800.00) |"),
        ("Longyearbyen, Svalbard", "| Longyearbyen, Svalbard | 78.22° |"),
    ],
)
def test_a_sheets_number_quoted_as_stored_is_held_as_shown(quote, text):
    assert holds(Chunk(text=text), _item(quote, {"sheet": "Table"}))


@pytest.mark.parametrize(
    ("quote", "text", "where"),
    [
        ("0.139", "| 15,000 | 13.8% |", {"sheet": "Table"}),  # another number
        ("0.139", "| 15,000 | 15% |", {"sheet": "Table"}),  # 15% stands for 0.145-0.155
        ("1414", "| 1,414 |", {"section": "Budget"}),  # not a sheet: verbatim only
    ],
)
def test_another_number_or_a_place_outside_a_sheet_does_not_hold_it(quote, text, where):
    assert not holds(Chunk(text=text), _item(quote, where))
