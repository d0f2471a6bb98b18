"""Office files, e-books, RTF and HTML files: which format a file is, by its content, and
its passages.

A format is told by what the file holds, not by its name: a zip's [Content_Types].xml names
the main part of a Word, PowerPoint or Excel file; an OpenDocument or EPUB file says what it
is in its first part, "mimetype"; RTF and HTML by their first bytes. Only a CSV file is
known by its name, since any text may be comma-separated. A password-protected Office file
is an OLE container holding an "EncryptedPackage"; other OLE files are the Office 97-2003
formats, which Loupe does not read.

These sources are of kind "document" (library.Source.Kind); the loader looks at the bytes
again, and a file that turns out to be plain text (an .html file holding no tag) is read as
text and becomes a source of kind "text".
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path
from typing import NamedTuple

from ingest.loaders import docx, epub, html, odt, pptx, rtf, sheets
from ingest.loaders.containers import damaged, open_zip, read_part, xml_part
from ingest.loaders.text import decode_text
from ingest.passages import LoaderError, Passage
from texts import Text

ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08")
OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
ENCRYPTED_PACKAGE = "EncryptedPackage".encode("utf-16-le")
CSV_SUFFIXES = {".csv", ".tsv"}
SUFFIXES = {".docx", ".docm", ".pptx", ".pptm", ".xlsx", ".xlsm", ".odt", ".ods", ".epub"}
DOCUMENT_FIRST_PARTS = (
    b"[Content_Types].xml", b"_rels/", b"docProps/", b"word/", b"ppt/", b"xl/", b"mimetype",
    b"META-INF/",
)  # fmt: skip
HTML_SUFFIXES = {".html", ".htm", ".xhtml"}
_HTML_START = re.compile(
    rb"^\s*(?:<\?xml[^>]*>\s*)?(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html|head|body)\b", re.I | re.S
)

ODF_TYPES = {
    "application/vnd.oasis.opendocument.text": "odt",
    "application/vnd.oasis.opendocument.text-template": "odt",
    "application/vnd.oasis.opendocument.spreadsheet": "ods",
    "application/vnd.oasis.opendocument.spreadsheet-template": "ods",
}
READERS = {
    "docx": Text("Word document"),
    "pptx": Text("PowerPoint slides"),
    "xlsx": Text("Excel workbook"),
    "ods": Text("OpenDocument spreadsheet"),
    "odt": Text("OpenDocument text"),
    "epub": Text("EPUB e-book"),
    "rtf": Text("RTF document"),
    "html": Text("HTML file (main text by trafilatura)"),
    "csv": Text("CSV table"),
}


class Loaded(NamedTuple):
    passages: list[Passage]
    page_count: int | None
    reader: Text
    title: str


def may_be_document(filename: str, head: bytes) -> bool:
    """Whether the first bytes of an upload look like a format of this module (the loader
    tells for sure, from the whole file)."""
    suffix = Path(filename).suffix.lower()
    return (
        (head.startswith(ZIP_MAGIC) and (_first_part_is_a_document(head) or suffix in SUFFIXES))
        or head.startswith(OLE_MAGIC)
        or rtf.is_rtf(head)
        or bool(_HTML_START.match(head[:1024]))
        or suffix in CSV_SUFFIXES
        or suffix in HTML_SUFFIXES
    )


def _first_part_is_a_document(head: bytes) -> bool:
    """Whether the zip's first part (named in its first local header) is one an office
    file or an e-book begins with; any other zip (an archive of files) is not read."""
    if len(head) < 30:
        return False
    length = int.from_bytes(head[26:28], "little")
    first = head[30 : 30 + length]
    return first.startswith(DOCUMENT_FIRST_PARTS)


def format_of(path: Path) -> str | None:
    """The format of a stored file ("docx", "epub", ...), None for plain text. Raises a
    LoaderError for a file of a kind Loupe cannot read (a damaged or protected one)."""
    with path.open("rb") as handle:
        head = handle.read(4096)
    if head.startswith(ZIP_MAGIC):
        return _zip_format(path)
    if head.startswith(OLE_MAGIC):
        raise _ole_error(path)
    if rtf.is_rtf(head):
        return "rtf"
    if _HTML_START.match(head[:1024]):
        return "html"
    suffix = path.suffix.lower()
    if suffix in CSV_SUFFIXES:
        return "csv"
    if suffix in HTML_SUFFIXES and b"<" in head:
        return "html"
    if suffix in SUFFIXES:
        raise _not_that_format(path)
    return None


def _zip_format(path: Path) -> str:
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise damaged(path.name) from exc
    with archive:
        names = set(archive.namelist())
        if "mimetype" in names:
            mimetype = (read_part(archive, "mimetype") or b"").decode("ascii", "replace").strip()
            if mimetype == "application/epub+zip":
                return "epub"
            if mimetype in ODF_TYPES:
                return ODF_TYPES[mimetype]
        if "[Content_Types].xml" in names:
            types = read_part(archive, "[Content_Types].xml") or b""
            for kind, module_types in (
                ("docx", docx.MAIN_TYPES),
                ("pptx", pptx.MAIN_TYPES),
                ("xlsx", sheets.MAIN_TYPES),
            ):
                if any(t.encode() in types for t in module_types):
                    return kind
    raise _not_that_format(path)


def _not_that_format(path: Path) -> LoaderError:
    return LoaderError(
        Text(
            "“%(name)s” is not a format Loupe reads: it is neither a Word, PowerPoint or Excel "
            "file, an OpenDocument text or spreadsheet, nor an EPUB e-book, whatever its name "
            "says.",
            name=path.name,
        )
    )


def _ole_error(path: Path) -> LoaderError:
    data = path.read_bytes()
    if ENCRYPTED_PACKAGE in data:
        return LoaderError(
            Text(
                "“%(name)s” is password-protected. Loupe cannot read protected documents: "
                "remove the password (in Office: File › Info › Protect) and upload it again.",
                name=path.name,
            )
        )
    return LoaderError(
        Text(
            "“%(name)s” is an Office 97-2003 file (.doc, .xls or .ppt), a format Loupe does "
            "not read: save it as .docx, .xlsx or .pptx (or as PDF) and upload that.",
            name=path.name,
        )
    )


def load(path: Path, fmt: str) -> Loaded:
    title = ""
    page_count: int | None = None
    if fmt == "rtf":
        passages = rtf.load(path)
    elif fmt == "html":
        page = html.load(path)
        passages, title = page.passages, page.title
    elif fmt == "csv":
        passages = sheets.load_csv(path, decode_text(path.read_bytes()).text)
    elif fmt == "xlsx":
        with open_zip(path) as archive:
            passages = sheets.load_xlsx(path, archive)
    else:
        with open_zip(path) as archive:
            passages, page_count, title = _from_zip(archive, path.name, fmt)
    if not any(passage.text.strip() for passage in passages):
        raise LoaderError(Text("“%(name)s” holds no text to read.", name=path.name))
    return Loaded(passages, page_count, READERS[fmt], title)


def _from_zip(
    archive: zipfile.ZipFile, name: str, fmt: str
) -> tuple[list[Passage], int | None, str]:
    if fmt == "docx":
        return docx.load(archive, _main_part(archive, docx.MAIN_TYPES, name), name), None, ""
    if fmt == "pptx":
        passages, slides = pptx.load(archive, _main_part(archive, pptx.MAIN_TYPES, name), name)
        return passages, slides, ""
    if fmt == "ods":
        return sheets.load_ods(archive, name), None, ""
    if fmt == "odt":
        return odt.load(archive, name), None, odt.title(archive, name)
    passages, title = epub.load(archive, name)
    return passages, None, title


def _main_part(archive: zipfile.ZipFile, types: tuple[str, ...], name: str) -> str:
    """The part [Content_Types].xml names as the document's main part."""
    tree = xml_part(archive, "[Content_Types].xml", name=name)
    if tree is not None:
        for override in tree:
            if override.get("ContentType") in types and override.get("PartName"):
                return override.get("PartName", "").lstrip("/")
    raise damaged(name)
