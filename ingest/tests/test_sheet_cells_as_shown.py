"""A workbook's numbers and dates are read as the spreadsheet shows them (13.9%, not the
0.139 it stores), so a question asked with the number a person sees finds its row."""

from __future__ import annotations

import datetime

import openpyxl
import pytest

from ingest.loaders import detect_kind, load_passages
from ingest.loaders.cell_formats import shown
from ingest.tests.data import FORMATS


def _text(path):
    kind = detect_kind(path.name, path.read_bytes()[:2048])
    return "\n".join(passage.text for passage in load_passages(kind, path).passages)


def test_a_real_workbooks_percentages_and_amounts_read_as_excel_shows_them():
    rates = _text(FORMATS / "xlsx" / "AverageTaxRates.xlsx")
    budget = _text(FORMATS / "xlsx" / "simple-monthly-budget.xlsx")
    cities = _text(FORMATS / "xlsx" / "DataTableCities.xlsx")

    # Stored as 15000, 0.23 ... 0.139 under the formats #,##0 and 0.0%.
    # (its £ column, 9,451, is hidden)
    assert "| 15,000 | 23.0% | 20.8% | 18.0% | 13.9% |" in rates
    assert "0.139" not in rates
    assert "| Car payment | $273.00 |" in budget  # "$"#,##0.00
    assert "| $3,750 | $2,336 | $1,414 | $1,414 |" in budget
    assert "| Shanghai, China | 31.23° | 121.50° | 24,256,800 |" in cities  # 0.00"°"


def test_a_dated_cell_reads_in_its_own_format(tmp_path):
    path = tmp_path / "dates.xlsx"
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.append(["Record", "Born", "Due", "Share"])
    sheet.append([5, datetime.datetime(1961, 9, 17), datetime.datetime(2024, 3, 1, 14, 5), 0.667])
    sheet["B2"].number_format = "DD-MM-YYYY"
    sheet["C2"].number_format = "d mmmm yyyy h:mm AM/PM"
    sheet["D2"].number_format = "0.0%"
    workbook.save(path)

    assert "| 5 | 17-09-1961 | 1 March 2024 2:05 PM | 66.7% |" in _text(path)


@pytest.mark.parametrize(
    ("value", "code", "text"),
    [
        (-800, '_("$"* #,##0.00_);_("$"* \\(#,##0.00\\);_("$"* "-"??_);_(@_)', "$(800.00)"),
        (0, '_("$"* #,##0.00_);_("$"* \\(#,##0.00\\);_("$"* "-"??_);_(@_)', "$-"),
        (-3, "0.00", "-3.00"),
        (1234567, '#,##0," k"', "1,235 k"),
        (0.5, "#.##", ".5"),
        (12.5, "[$€-407] #,##0.00", "€ 12.50"),
        (5, "0.00_);[Red]\\(0.00\\)", "5.00"),
        (datetime.time(9, 30), "hh:mm", "09:30"),
        (datetime.datetime(2024, 3, 1), "mmm d, yyyy", "Mar 1, 2024"),
    ],
)
def test_format_codes_are_rendered_as_excel_renders_them(value, code, text):
    assert shown(value, code) == text


@pytest.mark.parametrize(
    ("value", "code"),
    [
        (0.139, "General"),  # Excel's own shortest form: the stored value
        (123456, "0.00E+00"),  # scientific notation is not rendered
        (0.25, "# ?/?"),  # nor fractions
        (5, "[>100]0;0.0"),  # nor conditions
        (datetime.datetime(2024, 3, 1), "mm-dd-yy"),  # the reader's short date: not said
        (1.5, "[h]:mm"),  # elapsed time
        (True, "0.00"),
        ("text", "0.00"),
    ],
)
def test_a_format_not_rendered_leaves_the_stored_value(value, code):
    assert shown(value, code) is None
