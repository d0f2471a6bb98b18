"""Markdown tables in passages, read with each value's column name (generation/tables.py)."""

from generation.passage_units import units
from generation.tables import tables, with_named_rows

SHEET = """Rates by income.
|  | (iii) Average tax rates* |  |  |
| Full rate | | Single | Single |
| € | £ | 1999 | 2000 |
| --- | --- | --- | --- |
| 15,000 | 9,451 | 18.0% | 13.9% |
| 25,000 | 19,689 | 29.3% | 23.9% |
|  |  | 0.0% | 0.0% |
| * Total of income tax and levies as a share of gross income. |  |  |  |
After the table."""


def test_a_tables_rows_are_named_by_their_columns_and_its_title_kept_apart():
    [table] = tables(SHEET)

    assert table.titles() == ["(iii) Average tax rates*"]
    assert table.named_rows() == [
        "Full rate €: 15,000; £: 9,451; Single 1999: 18.0%; Single 2000: 13.9%",
        "Full rate €: 25,000; £: 19,689; Single 1999: 29.3%; Single 2000: 23.9%",
        "Single 1999: 0.0%; Single 2000: 0.0%",  # one value, but figures: named
        "* Total of income tax and levies as a share of gross income.",  # a note: no names
    ]


def test_lines_of_pipes_without_a_header_rule_are_no_table():
    assert tables("| a | b |\n| c | d |") == []


def test_an_extractive_answer_quotes_named_rows_never_the_header():
    quotable = [unit.text for unit in units(SHEET)]

    assert "Full rate €: 15,000; £: 9,451; Single 1999: 18.0%; Single 2000: 13.9%" in quotable
    assert not any("| ---" in text or "(iii)" in text for text in quotable)
    assert with_named_rows(SHEET).startswith("Rates by income.\nFull rate €: 15,000;")
    assert with_named_rows(SHEET).endswith("gross income.\nAfter the table.")
