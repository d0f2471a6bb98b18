"""Office files, e-books, RTF and CSV are read with their structure: sections from headings,
a slide a page with its notes, a sheet's rows under their header; bad files fail saying why."""

from __future__ import annotations

import zipfile

import openpyxl
import pytest

from ingest.chunker import chunk_passages
from ingest.loaders import detect_kind, load_passages
from ingest.loaders.blocks import table_blocks
from ingest.passages import LoaderError
from ingest.tests import office_files
from ingest.tests.data import FORMATS


def _read(path):
    kind = detect_kind(path.name, path.read_bytes()[:2048])
    return load_passages(kind, path)


def _chunks(path):
    return chunk_passages(_read(path).passages)


def test_a_word_document_gives_its_headings_as_sections(tmp_path):
    body = (
        office_files.paragraph("Annual report", "Title")
        + office_files.paragraph("Finances", "Heading1")
        + office_files.paragraph("Revenue grew by four percent in the year under review.")
        + office_files.paragraph("Staff", "Heading1")
        + office_files.paragraph("The team grew to twelve people.")
    )
    path = office_files.docx(tmp_path / "report.docx", body)

    chunks = _chunks(path)

    staff = next(chunk for chunk in chunks if "twelve people" in chunk.text)
    assert staff.section == ("Annual report", "Staff")
    assert detect_kind("report.docx", path.read_bytes()[:2048]) == "document"
    assert str(_read(path).reader) == "Word document"


def test_tracked_deletions_are_dropped_and_insertions_kept(tmp_path):
    body = (
        "<w:p><w:r><w:t xml:space='preserve'>The meeting is on </w:t></w:r>"
        "<w:del><w:r><w:delText>Monday</w:delText></w:r></w:del>"
        "<w:ins><w:r><w:t>Tuesday</w:t></w:r></w:ins></w:p>"
    )
    text = _read(office_files.docx(tmp_path / "changes.docx", body)).passages[0].text

    assert "The meeting is on Tuesday" in text
    assert "Monday" not in text


def test_comments_and_footnotes_follow_their_paragraph(tmp_path):
    body = (
        "<w:p><w:r><w:t>Otters sleep holding hands.</w:t></w:r>"
        "<w:r><w:commentReference w:id='0'/></w:r>"
        "<w:r><w:footnoteReference w:id='2'/></w:r></w:p>"
        + office_files.paragraph("Another paragraph.")
    )
    path = office_files.docx(
        tmp_path / "notes.docx",
        body,
        comments=(
            "<w:comment w:id='0' w:author='Ana'><w:p><w:r><w:t>Source?</w:t></w:r></w:p>"
            "</w:comment>"
        ),
        footnotes=(
            "<w:footnote w:id='2'><w:p><w:r><w:t>Seen in Monterey Bay.</w:t></w:r></w:p>"
            "</w:footnote>"
        ),
    )

    text = _read(path).passages[0].text

    assert text.split("\n\n")[:4] == [
        "Otters sleep holding hands.",
        "[Comment, Ana: Source?]",
        "[^2]: Seen in Monterey Bay.",
        "Another paragraph.",
    ]


def test_a_slide_is_a_page_labelled_with_its_number_and_holds_its_notes(tmp_path):
    path = office_files.pptx(
        tmp_path / "deck.pptx",
        [
            ("Welcome", "Agenda for today", ""),
            ("Results", "Sales doubled", "Mention the weather in March."),
        ],
    )

    loaded = _read(path)

    second = loaded.passages[1]
    assert (second.page, second.page_label) == (2, "slide 2")
    assert second.sections[0].path == ("Results",)
    assert "Sales doubled" in second.text
    assert "Speaker notes:\n\nMention the weather in March." in second.text
    assert "2" not in second.text.split()  # the slide number placeholder is furniture
    assert loaded.page_count == 2


def _workbook(path, rows, *, merge=""):
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Cities"
    for row in rows:
        sheet.append(row)
    if merge:
        sheet.merge_cells(merge)
    workbook.save(path)
    return path


def test_a_sheet_is_read_as_markdown_rows_under_its_header_in_every_chunk(tmp_path):
    rows = [["City", "Country", "Population"]] + [
        [f"City number {n}", "Somewhere", 1000 + n] for n in range(200)
    ]
    path = _workbook(tmp_path / "cities.xlsx", rows)

    chunks = _chunks(path)

    assert len(chunks) > 3
    for chunk in chunks:
        assert chunk.text.startswith("| City | Country | Population |\n| --- | --- | --- |")
        assert chunk.section == ("Cities",)
        assert chunk.page == 1
        assert chunk.page_label.startswith("rows ")
    assert "| City number 150 | Somewhere | 1150 |" in "\n".join(c.text for c in chunks)
    assert chunks[0].page_label.startswith("rows 1–")


def test_a_formula_gives_its_cached_value_and_a_merged_cell_is_spelled_out(tmp_path):
    path = tmp_path / "budget.xlsx"
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.append(["Item", "Cost", "Cost"])
    sheet.append(["Rent", 900, 910])
    sheet.merge_cells("B1:C1")
    workbook.save(path)
    # openpyxl writes no cached values; put one in, as Excel does when it saves.
    with zipfile.ZipFile(path) as archive:
        parts = {name: archive.read(name) for name in archive.namelist()}
    sheet_xml = parts["xl/worksheets/sheet1.xml"].decode()
    sheet_xml = sheet_xml.replace(
        "</sheetData>", '<row r="3"><c r="B3"><f>B2*2</f><v>1800</v></c></row></sheetData>'
    )
    parts["xl/worksheets/sheet1.xml"] = sheet_xml.encode()
    office_files.write_zip(path, parts)

    text = _read(path).passages[0].text

    assert "| Item | Cost | Cost |" in text
    assert "|  | 1800 |  |" in text


def test_the_table_header_is_its_rows_before_the_figures():
    rows = [
        ["Rates"],
        ["Earnings", "2006", "2007"],
        *([f"{n}000", "0.2", "0.1"] for n in range(6, 9)),
    ]

    blocks = table_blocks(rows)

    assert blocks[0].text.splitlines()[:2] == ["| Rates |", "| Earnings | 2006 | 2007 |"]


def test_tables_stacked_in_one_sheet_are_each_under_their_own_labels():
    years = ["2006", "2007"]
    rows = [
        ["Average tax rates"],
        ["Full rate", "Single", "Single"],
        ["Earnings", *years],
        ["15,000", "3.2%", "0.0%"],
        ["20,000", "8.4%", "7.1%"],
        ["Full rate", "Married", "Married"],
        ["Earnings", *years],
        ["15,000", "2.2%", "0.0%"],
        ["* Rates include levies."],
    ]

    blocks = table_blocks(rows, list(range(1, 10)))

    assert [(block.first, block.last) for block in blocks] == [(1, 5), (6, 9)]
    single, married = (block.text.splitlines() for block in blocks)
    assert single[:3] == [
        "| Average tax rates |",
        "| Full rate | Single | Single |",
        "| Earnings | 2006 | 2007 |",
    ]
    assert married[:3] == [
        "| Average tax rates |",
        "| Full rate | Married | Married |",
        "| Earnings | 2006 | 2007 |",
    ]
    assert "| 15,000 | 2.2% | 0.0% |" in married
    assert not any("Married" in line for line in single)


def test_amounts_of_money_are_figures_under_labels_of_their_own():
    rows = [
        ["Monthly budget"],
        ["Item", "Amount", ""],
        ["Rent", "$800.00", "62%"],
        ["Food", "$500.00", "20%"],
        ["Total income", "Total expenses", "Balance"],
        ["$3,750", "$2,336", "$1,414"],
    ]

    blocks = table_blocks(rows)

    assert blocks[-1].text.splitlines() == [
        "| Monthly budget |",
        "| Total income | Total expenses | Balance |",
        "| --- | --- | --- |",
        "| $3,750 | $2,336 | $1,414 |",
    ]


def test_a_group_row_of_one_cell_does_not_head_the_rows_after_it():
    rows = [
        ["Name", "Team", "Score"],
        ["Ana", "Red", "5"],
        ["Second half"],
        ["Ben", "Blue", "7"],
    ]

    (block,) = table_blocks(rows)

    assert block.text.splitlines()[0] == "| Name | Team | Score |"
    assert "| Second half |" in block.text


def test_hidden_rows_and_columns_are_not_read_unless_a_filter_hides_them(tmp_path):
    path = tmp_path / "rates.xlsx"
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.append(["Earnings", "Old currency", "Rate"])
    sheet.append([15000, 9451, 0.2])
    sheet.append(["Earnings", None, "Rate"])  # a leftover label row, hidden
    sheet.append([20000, 15751, 0.25])
    sheet.row_dimensions[3].hidden = True
    sheet.column_dimensions["B"].hidden = True
    filtered = workbook.create_sheet("Filtered")
    filtered.append(["Name", "Score"])
    filtered.append(["Ana", 5])
    filtered.append(["Ben", 7])
    filtered.auto_filter.ref = "A:B"  # whole columns: no first or last row
    filtered.row_dimensions[3].hidden = True
    workbook.save(path)

    rates, names = _read(path).passages

    assert rates.text.splitlines() == [
        "| Earnings | Rate |",
        "| --- | --- |",
        "| 15000 | 0.2 |",
        "| 20000 | 0.25 |",
    ]
    assert "| Ben | 7 |" in names.text


def test_an_opendocument_sheet_leaves_out_its_collapsed_rows_and_columns(tmp_path):
    def row(*texts, visibility=""):
        cells = "".join(f"<table:table-cell><text:p>{t}</text:p></table:table-cell>" for t in texts)
        shown = f" table:visibility='{visibility}'" if visibility else ""
        return f"<table:table-row{shown}>{cells}</table:table-row>"

    body = (
        "<office:spreadsheet><table:table table:name='Results'>"
        "<table:table-column/><table:table-column table:visibility='collapse'/>"
        "<table:table-column/>"
        + row("Name", "Note", "Share")
        + row("Ana", "draft", "66.7%")
        + row("Old", "gone", "1%", visibility="collapse")
        + row("Ben", "filtered", "20%", visibility="filter")
        + "</table:table></office:spreadsheet>"
    )
    path = office_files.odf(tmp_path / "results.ods", "spreadsheet", body)

    text = _read(path).passages[0].text

    assert text.splitlines()[0] == "| Name | Share |"
    assert "| Ana | 66.7% |" in text
    assert "| Ben | 20% |" in text
    assert "Old" not in text and "draft" not in text


def test_an_epub_chapter_is_a_section_and_poem_lines_in_divs_are_kept(tmp_path):
    path = office_files.epub(
        tmp_path / "poems.epub",
        [
            "<h1>The Book</h1><h2>I. Morning</h2>"
            "<div>The sun came up</div><div>over the hill</div>",
            "<h2>II. Evening</h2><p>The moon went down.</p>",
        ],
        title="Poems of the Day",
    )

    loaded = _read(path)
    chunks = chunk_passages(loaded.passages)

    assert loaded.title == "Poems of the Day"
    morning = next(chunk for chunk in chunks if "over the hill" in chunk.text)
    evening = next(chunk for chunk in chunks if "moon went down" in chunk.text)
    assert morning.section == ("The Book", "I. Morning")
    assert evening.section == ("The Book", "II. Evening")


def test_an_opendocument_text_keeps_headings_and_footnotes(tmp_path):
    body = (
        "<office:text><text:h text:outline-level='1'>Directory</text:h>"
        "<text:p>A time stamp counts 100 nanoseconds (10<text:span>–7</text:span> seconds)."
        "<text:note><text:note-citation>1</text:note-citation><text:note-body><text:p>"
        "Since 1601.</text:p></text:note-body></text:note></text:p></office:text>"
    )
    path = office_files.odf(tmp_path / "spec.odt", "text", body)

    passage = _read(path).passages[0]

    assert "(10–7 seconds)." in passage.text
    assert "[^1]: Since 1601." in passage.text
    assert passage.sections[0].path == ("Directory",)


def test_an_opendocument_spreadsheet_shows_cells_as_displayed(tmp_path):
    body = (
        "<office:spreadsheet><table:table table:name='Results'>"
        "<table:table-row><table:table-cell><text:p>Name</text:p></table:table-cell>"
        "<table:table-cell><text:p>Share</text:p></table:table-cell></table:table-row>"
        "<table:table-row table:number-rows-repeated='1000000'><table:table-cell "
        "table:number-columns-repeated='1024'/></table:table-row>"
        "<table:table-row><table:table-cell><text:p>Ana</text:p></table:table-cell>"
        "<table:table-cell office:value-type='percentage' office:value='0.667'>"
        "<text:p>66.7%</text:p></table:table-cell></table:table-row>"
        "</table:table></office:spreadsheet>"
    )
    path = office_files.odf(tmp_path / "results.ods", "spreadsheet", body)

    passage = _read(path).passages[0]

    assert "| Ana | 66.7% |" in passage.text
    assert passage.page_label == "rows 1–1000002"


def test_a_csv_file_is_a_table(tmp_path):
    path = tmp_path / "prices.csv"
    path.write_text("fruit;price\napple;1.20\npear;0.90\n", encoding="utf-8")

    text = _read(path).passages[0].text

    assert "| apple | 1.20 |" in text


def test_an_rtf_file_is_read_in_the_code_page_of_its_fonts(tmp_path):
    path = tmp_path / "clanek.rtf"
    path.write_bytes(
        b"{\\rtf1\\ansi\\ansicpg1252"
        b"{\\fonttbl{\\f0\\fcharset0 Times;}{\\f1\\fcharset238 Times CE;}}"
        b"\\pard\\f1 Svitky od Mrtv\\'e9ho mo\\'f8e\\par}"
    )

    assert "Svitky od Mrtvého moře" in _read(path).passages[0].text


def test_a_plain_zip_archive_is_refused_at_upload():
    with zipfile.ZipFile(__import__("io").BytesIO(), "w") as archive:
        archive.writestr("notes/a.txt", "hello")
        head = archive.fp.getvalue()[:2048]  # type: ignore[union-attr]

    with pytest.raises(LoaderError, match="not a file Loupe can read yet"):
        detect_kind("notes.zip", head)


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("testWORD_protected_passtika.docx", "password-protected"),
        ("extenxls_pwd123.xlsx", "password-protected"),
        ("testWORD_truncated.docx", "damaged"),
        ("Divino_Revelado.pptx", "damaged"),
        ("poc-xmlbomb.xlsx", "declares XML entities"),
        ("type_excel.ods", "Office 97-2003"),
        ("testODTnotaZipFile.odt", "not a format Loupe reads"),
    ],
)
def test_a_bad_real_file_fails_saying_why(name, says):
    with pytest.raises(LoaderError, match=says):
        _read(FORMATS / "odd" / name)


def test_a_macro_enabled_document_is_read_without_its_macros():
    text = " ".join(passage.text for passage in _read(FORMATS / "odd" / "45690.docm").passages)

    assert "Стрелец A*" in text


def test_a_zip_bomb_is_refused_before_it_is_unpacked(tmp_path):
    path = office_files.docx(tmp_path / "bomb.docx", office_files.paragraph("x"))
    with zipfile.ZipFile(path, "a", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("word/media/padding.bin", b"\0" * (300 * 1024 * 1024))

    with pytest.raises(LoaderError, match="zip bomb"):
        _read(path)


def test_an_entity_declaration_is_refused(tmp_path):
    bomb = (
        '<?xml version="1.0"?><!DOCTYPE w [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;">]>'
        f'<w:document xmlns:w="{office_files.W_NS}"><w:body><w:p><w:r><w:t>&b;</w:t></w:r>'
        "</w:p></w:body></w:document>"
    )
    path = office_files.docx(tmp_path / "entities.docx", "")
    with zipfile.ZipFile(path) as archive:
        parts = {name: archive.read(name) for name in archive.namelist()}
    parts["word/document.xml"] = bomb.encode()
    office_files.write_zip(path, parts)

    with pytest.raises(LoaderError, match="declares XML entities"):
        _read(path)


@pytest.mark.parametrize(
    "name",
    sorted(
        str(path.relative_to(FORMATS))
        for path in FORMATS.rglob("*")
        if path.is_file() and path.parent.name != "odd"
    ),
)
def test_every_real_document_reads_into_passages(name):
    assert any(passage.text.strip() for passage in _read(FORMATS / name).passages)


def test_an_rtf_tables_rows_are_markdown_rows_with_each_cell_on_the_row(tmp_path):
    path = tmp_path / "menu.rtf"
    path.write_bytes(
        b"{\\rtf1\\ansi Menu\\par"
        b"\\pard\\intbl Monday:\\par Soup\\cell Goulash\\cell\\row"
        b"\\pard\\intbl Tuesday:\\cell Fish\\cell\\row\\pard After the table.\\par}"
    )

    text = _read(path).passages[0].text

    assert "| Monday: Soup | Goulash |\n| Tuesday: | Fish |" in text
    assert text.endswith("After the table.")


def test_a_workbook_over_the_cell_cap_fails_naming_it(tmp_path, monkeypatch):
    monkeypatch.setattr("ingest.loaders.sheets.MAX_CELLS", 50)
    path = _workbook(tmp_path / "big.xlsx", [[f"r{r}c{c}" for c in range(5)] for r in range(20)])

    with pytest.raises(LoaderError, match="more than 50 filled cells"):
        _read(path)


def test_a_workbooks_summary_names_its_sheets_not_its_cells(tmp_path):
    from ingest.summaries import summarize

    workbook = openpyxl.Workbook()
    for index, name in enumerate(["Rates 2006", "Rates 2007", "Self-employed"]):
        sheet = workbook.active if index == 0 else workbook.create_sheet()
        sheet.title = name
        for row in [["Earnings", "Rate"], [6000, 0.06], [9000, 0.12]]:
            sheet.append(row)
    path = tmp_path / "rates.xlsx"
    workbook.save(path)

    summary = summarize(
        passages=_read(path).passages, title="rates", language="en", user=None, extractive_only=True
    )

    assert "|" not in summary.text
    assert "Rates 2006, Rates 2007, Self-employed" in summary.text
