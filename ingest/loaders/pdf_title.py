"""A PDF's title from its metadata (/Title), when it is a title a person would give it.

Programs fill /Title with whatever they have: the file name ("Binder1.pdf", "Microsoft Word -
report.docx", "imagemagick-lzw"), a placeholder ("untitled", "Untitled document", "Title",
AutoCAD's "Model"), or bytes decoded the wrong way. A source keeps its file name unless the
metadata gives better; what this accepts and refuses among the PDFs in ../shared/data is
listed in ingest/tests/test_pdf_title.py.
"""

from __future__ import annotations

import re
import unicodedata

# Shorter than this many letters, a title says nothing ("A", "x1"); longer than this many
# characters, it is a sentence or an abstract pasted into the field.
MIN_LETTERS = 3
MAX_CHARS = 200

# What office programs and printer drivers put before the file's name.
_PROGRAM_PREFIX = re.compile(
    r"^(microsoft (word|powerpoint|excel|publisher)|powerpoint presentation|word)\s*-\s*",
    re.IGNORECASE,
)
_PLACEHOLDER = re.compile(
    r"^(untitled|untitled document|no title|title|titel|ohne titel|sans titre|sin título|"
    r"document|dokument|doc|model|layout|binder|book|presentation|präsentation|slide|folie|"
    r"template|vorlage|draft|entwurf|test|unknown|none|null|default|pdf|new document|"
    r"neues dokument|print|scan|image|page)[\s_-]*\d*$",
    re.IGNORECASE,
)
# A name as files are named: an extension at the end, or a path.
_FILE_NAME = re.compile(
    r"\.(pdf|docx?|odt|rtf|txt|tex|dvi|ps|eps|indd|qxd|pm\d|pptx?|xlsx?|html?|png|jpe?g|tiff?)$"
    r"|^[a-z]:\\|[\\/]",
    re.IGNORECASE,
)
# UTF-8 read as Latin-1 or cp1252 ("Ã©" for "é", "ã…" for a CJK character).
_MOJIBAKE = re.compile("[ÂÃâãåæçèéêëîïðñòôõö][\u0080-\u00bf\u0152-\u02dc\u2013-\u203a\u20ac\u2122]")


def title_from_metadata(raw: str) -> str:
    """`raw` (the /Title as PDFium decoded it) made one line, or "" when it is no real
    title: empty, garbled, a placeholder, a file name, or too short or too long to be one."""
    if "\ufffd" in raw or _MOJIBAKE.search(raw):
        return ""
    # Control characters (a trailing NUL is common) and line breaks out, spaces made one.
    text = "".join(" " if unicodedata.category(char)[0] in "CZ" else char for char in raw)
    title = " ".join(text.split())
    title = _PROGRAM_PREFIX.sub("", title).strip(" -")
    if not title or len(title) > MAX_CHARS:
        return ""
    if sum(char.isalpha() for char in title) < MIN_LETTERS:
        return ""
    if _PLACEHOLDER.match(title) or _FILE_NAME.search(title):
        return ""
    if " " not in title and _looks_like_a_file_name(title):
        return ""
    return title


def _looks_like_a_file_name(word: str) -> bool:
    """One word that reads as a file's name, not a title: with an underscore, a dot or a
    digit ("report_v2", "ms.2019", "Scan0412"), or beginning with a small letter
    ("habibi", "imagemagick-lzw"); "Debian-Referenz" is a title."""
    if re.search(r"[_.\d]", word):
        return True
    first = next((char for char in word if char.isalpha()), "")
    return not first.isupper()
