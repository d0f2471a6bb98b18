"""Spreadsheets (.xlsx, .xlsm, .ods, .csv): each sheet a table, cited by sheet and rows.

A sheet is page n of the source (its place among the visible sheets), its name the section
of every passage, and each passage a block of whole rows under the sheet's header row (its
first row with anything in it), labelled with the rows it holds ("rows 12–40"). What a cell
contributes is what Excel or Calc last showed for it:

- a formula cell its cached value (the file's, never recomputed; none when the writer saved
  none);
- a number or date as its format shows it (13.9%, not the 0.139 stored; $2,500.00;
  17-09-1961), rendered by cell_formats.py, else as stored (dates as 2024-03-01); an .ods
  cell its displayed text, which OpenDocument keeps beside the value;
- a merged cell its text in every cell it covers, unless it covers more than
  MAX_SPELLED_CELLS (a block of instructions is said once, at its first cell).

Hidden sheets are not read: they hold a workbook's lookup tables, not what a person reads;
nor are hidden rows and columns (rows an autofilter hides are read: they are data).
Workbooks over MAX_CELLS filled cells fail, saying so, rather than being read in part.
"""

from __future__ import annotations

import contextlib
import csv
import datetime
import io
import warnings
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from lxml import etree

from ingest.loaders import cell_formats
from ingest.loaders.blocks import DocumentText, clean, table_blocks
from ingest.loaders.containers import refuse_entities, xml_part
from ingest.passages import LoaderError, Passage
from texts import Text

MAIN_TYPES = (
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml",
    "application/vnd.ms-excel.sheet.macroEnabled.main+xml",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.template.main+xml",
    "application/vnd.ms-excel.template.macroEnabled.main+xml",
)
MAX_CELLS = 200_000
MAX_COLUMNS = 64
# The worksheets' XML a workbook may have before openpyxl builds it in memory.
MAX_SHEET_XML_BYTES = 48 * 1024 * 1024
MAX_SPELLED_CELLS = 24
EXCEL_ROWS = 1_048_576
ROWS_LABEL = "rows %(rows)s"

TABLE = "{urn:oasis:names:tc:opendocument:xmlns:table:1.0}"
TEXT = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
OFFICE = "{urn:oasis:names:tc:opendocument:xmlns:office:1.0}"


@dataclass
class Sheet:
    name: str
    rows: list[tuple[int, list[str]]]  # (row number from 1, cell texts)


def too_many_cells(name: str) -> LoaderError:
    return LoaderError(
        Text(
            "“%(name)s” has more than %(most)s filled cells; Loupe reads spreadsheets up to "
            "that size. Save the sheets you need in a smaller workbook.",
            name=name,
            most=f"{MAX_CELLS:,}",
        )
    )


def passages(sheets: list[Sheet]) -> list[Passage]:
    out = DocumentText()
    for number, sheet in enumerate(sheets, start=1):
        rows = [(n, cells) for n, cells in sheet.rows if any(cells)]
        if not rows:
            continue
        width = max(len(cells) for _, cells in rows)
        kept = [c for c in range(width) if any(c < len(cells) and cells[c] for _, cells in rows)]
        grid = [[cells[c] if c < len(cells) else "" for c in kept] for _, cells in rows]
        out.set_path((clean(sheet.name) or f"Sheet {number}",))
        out.page = number
        blocks = table_blocks(grid, [n for n, _ in rows])
        out.table_passages(blocks, label_for=ROWS_LABEL)
    return out.finish()


def value_text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return f"{value:.15g}"
    if isinstance(value, datetime.datetime):
        if value.time() == datetime.time(0):
            return value.date().isoformat()
        return value.isoformat(sep=" ")
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    return clean(str(value))


def load_xlsx(path: Path, archive: zipfile.ZipFile) -> list[Passage]:
    # Imported here: openpyxl is only needed for workbooks, and it is slow to import.
    import openpyxl
    from openpyxl.utils.exceptions import InvalidFileException

    sheet_bytes = sum(
        member.file_size
        for member in archive.infolist()
        if member.filename.startswith("xl/worksheets/")
    )
    if sheet_bytes > MAX_SHEET_XML_BYTES:
        raise too_many_cells(path.name)
    # openpyxl parses with defusedxml, which refuses entity declarations; this says why.
    refuse_entities(archive, name=path.name)
    try:
        # openpyxl warns of every feature it drops (conditional formats, extensions): none
        # of them is text.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            workbook = openpyxl.load_workbook(
                path, read_only=False, data_only=True, keep_vba=False, keep_links=False
            )
    except (InvalidFileException, KeyError, ValueError, TypeError, zipfile.BadZipFile) as exc:
        raise LoaderError(
            Text(
                "“%(name)s” could not be read as a workbook (%(error)s).",
                name=path.name,
                error=str(exc) or type(exc).__name__,
            )
        ) from exc
    except Exception as exc:
        if type(exc).__module__.startswith("defusedxml"):
            raise LoaderError(
                Text(
                    "“%(name)s” declares XML entities, which office documents never do (it "
                    "may be an attack on XML readers); Loupe does not read it.",
                    name=path.name,
                )
            ) from exc
        raise
    sheets = []
    filled = 0
    for worksheet in workbook.worksheets:
        if worksheet.sheet_state != "visible":
            continue
        grid: dict[tuple[int, int], str] = {}
        hidden_rows, hidden_columns = _hidden(worksheet)
        for row in worksheet.iter_rows(max_col=MAX_COLUMNS):
            for cell in row:
                if cell.row in hidden_rows or cell.column in hidden_columns:
                    continue
                text = cell_formats.shown(cell.value, cell.number_format)
                if text is None:
                    text = value_text(cell.value)
                if text:
                    grid[(cell.row, cell.column)] = text
                    filled += 1
            if filled > MAX_CELLS:
                raise too_many_cells(path.name)
        for merged in worksheet.merged_cells.ranges:
            text = grid.get((merged.min_row, merged.min_col), "")
            area = (merged.max_row - merged.min_row + 1) * (merged.max_col - merged.min_col + 1)
            if not text or area > MAX_SPELLED_CELLS:
                continue
            for r in range(merged.min_row, merged.max_row + 1):
                for c in range(merged.min_col, min(merged.max_col, MAX_COLUMNS) + 1):
                    if r not in hidden_rows and c not in hidden_columns:
                        grid[(r, c)] = text
        sheets.append(Sheet(worksheet.title, _rows(grid)))
    workbook.close()
    return passages(sheets)


def _hidden(worksheet) -> tuple[set[int], set[int]]:
    """The rows and columns a sheet hides: what Excel does not show is not read (a
    superseded figure, a helper column). Rows an autofilter hides are kept: they are the
    table's data, filtered out for the moment."""
    from openpyxl.utils import range_boundaries

    filtered = range(0)
    if worksheet.auto_filter.ref:
        # A filter over whole columns ("A:C") has no first or last row.
        _, top, _, bottom = range_boundaries(worksheet.auto_filter.ref)
        filtered = range(top or 1, (bottom or EXCEL_ROWS) + 1)
    rows = {
        number
        for number, dimension in worksheet.row_dimensions.items()
        if dimension.hidden and number not in filtered
    }
    columns = {
        number
        for dimension in worksheet.column_dimensions.values()
        if dimension.hidden and dimension.min
        for number in range(dimension.min, min(dimension.max or dimension.min, MAX_COLUMNS) + 1)
    }
    return rows, columns


def _rows(grid: dict[tuple[int, int], str]) -> list[tuple[int, list[str]]]:
    by_row: dict[int, dict[int, str]] = {}
    for (r, c), text in grid.items():
        by_row.setdefault(r, {})[c] = text
    rows = []
    for r in sorted(by_row):
        cells = by_row[r]
        rows.append((r, [cells.get(c, "") for c in range(1, max(cells) + 1)]))
    return rows


def load_ods(archive: zipfile.ZipFile, name: str) -> list[Passage]:
    content = xml_part(archive, "content.xml", name=name)
    if content is None:
        raise LoaderError(Text("“%(name)s” has no spreadsheet content.", name=name))
    sheets = []
    filled = 0
    for table in content.iter(f"{TABLE}table"):
        if table.get(f"{TABLE}display") == "false":
            continue
        rows: list[tuple[int, list[str]]] = []
        spans: dict[int, tuple[int, str]] = {}  # column → (rows left, text) of a merge
        number = 0
        hidden = _ods_hidden_columns(table)
        for row in _table_rows(table):
            repeat = _count(row.get(f"{TABLE}number-rows-repeated"))
            cells = list(_ods_cells(row, spans, hidden))
            # A collapsed row is hidden as Excel hides one; a filtered row is kept.
            if not any(cells) or row.get(f"{TABLE}visibility") == "collapse":
                number += repeat  # empty rows, possibly a million of them, cost nothing
                continue
            for _ in range(min(repeat, MAX_CELLS)):
                number += 1
                rows.append((number, cells))
                filled += sum(1 for cell in cells if cell)
                if filled > MAX_CELLS:
                    raise too_many_cells(name)
        sheets.append(Sheet(table.get(f"{TABLE}name", ""), rows))
    return passages(sheets)


def _table_rows(table: etree._Element) -> Iterator[etree._Element]:
    for child in table:
        if child.tag == f"{TABLE}table-row":
            yield child
        elif child.tag in (
            f"{TABLE}table-header-rows",
            f"{TABLE}table-rows",
            f"{TABLE}table-row-group",
        ):
            yield from _table_rows(child)


def _ods_hidden_columns(table: etree._Element) -> set[int]:
    """The columns (from 0) a sheet collapses."""
    hidden: set[int] = set()
    column = 0
    for element in table.iter(f"{TABLE}table-column"):
        repeat = _count(element.get(f"{TABLE}number-columns-repeated"))
        if element.get(f"{TABLE}visibility") == "collapse":
            hidden.update(range(column, min(column + repeat, MAX_COLUMNS)))
        column += repeat
        if column >= MAX_COLUMNS:
            break
    return hidden


def _count(value: str | None) -> int:
    return int(value) if value and value.isdigit() else 1


def _ods_cells(
    row: etree._Element, spans: dict[int, tuple[int, str]], hidden: set[int]
) -> Iterator[str]:
    """A row's cell texts, a merged cell's text in each cell it covers; trailing empty
    cells (repeated to the sheet's last column) and `hidden` columns left out."""
    cells: list[str] = []
    pending_empty = 0
    column = 0
    for cell in row:
        if cell.tag not in (f"{TABLE}table-cell", f"{TABLE}covered-table-cell"):
            continue
        repeat = _count(cell.get(f"{TABLE}number-columns-repeated"))
        text = " ".join(filter(None, (clean(_ods_text(p)) for p in cell.iter(f"{TEXT}p"))))
        if not text and cell.tag == f"{TABLE}table-cell":
            text = cell.get(f"{OFFICE}value") or cell.get(f"{OFFICE}date-value") or ""
        for _ in range(repeat):
            if column >= MAX_COLUMNS:
                break
            shown = text
            if cell.tag == f"{TABLE}covered-table-cell" and column in spans:
                shown = spans[column][1]
            elif cell.tag == f"{TABLE}table-cell":
                across = _count(cell.get(f"{TABLE}number-columns-spanned"))
                down = _count(cell.get(f"{TABLE}number-rows-spanned"))
                if text and across * down > 1 and across * down <= MAX_SPELLED_CELLS:
                    for c in range(column, min(column + across, MAX_COLUMNS)):
                        spans[c] = (down, text)
            if column in hidden:
                pass
            elif shown:
                cells.extend([""] * pending_empty)
                pending_empty = 0
                cells.append(shown)
            else:
                pending_empty += 1
            column += 1
    for c in list(spans):
        left, text = spans[c]
        if left <= 1:
            del spans[c]
        else:
            spans[c] = (left - 1, text)
    yield from cells


def _ods_text(paragraph: etree._Element) -> str:
    pieces = [paragraph.text or ""]
    for child in paragraph:
        if child.tag == f"{TEXT}s":
            pieces.append(" " * _count(child.get(f"{TEXT}c")))
        elif child.tag == f"{TEXT}tab":
            pieces.append("\t")
        elif child.tag == f"{TEXT}line-break":
            pieces.append("\n")
        elif child.tag != f"{OFFICE}annotation":
            pieces.append(_ods_text(child))
        pieces.append(child.tail or "")
    return "".join(pieces)


def load_csv(path: Path, content: str) -> list[Passage]:
    sample = content[:65536]
    delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
    with contextlib.suppress(csv.Error):
        delimiter = csv.Sniffer().sniff(sample, delimiters=",;\t|").delimiter
    rows = []
    filled = 0
    reader = csv.reader(io.StringIO(content), delimiter=delimiter)
    try:
        for number, row in enumerate(reader, start=1):
            cells = [clean(cell) for cell in row[:MAX_COLUMNS]]
            filled += sum(1 for cell in cells if cell)
            if filled > MAX_CELLS:
                raise too_many_cells(path.name)
            rows.append((number, cells))
    except csv.Error as exc:
        raise LoaderError(
            Text(
                "“%(name)s” is not a readable CSV file (%(error)s).", name=path.name, error=str(exc)
            )
        ) from exc
    return passages([Sheet(path.stem, rows)])
