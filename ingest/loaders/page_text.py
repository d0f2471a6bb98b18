"""What a page's text layer says, cleaned so that words read as words.

PDFium gives the text in reading order with `\\r\\n` line ends. Where a word was hyphenated at
a line end it joins the two halves itself and leaves a marker (U+FFFE, or `\\x02` in older
builds) where the hyphen was: a lower-case letter after the marker is the rest of the same
word ("distri␦bution"), an upper-case one starts the second half of a compound whose hyphen
is real ("Debian␦System", "Windows␦Taste"). Other extractors (pypdf, OCR) keep "exam-\\n
ple" instead, which is joined the same way.
"""

from __future__ import annotations

import re
import unicodedata

HYPHEN_MARKS = "\ufffe\x02"
# Every control character but the line feed and the tab: PDFium's markers, form feeds,
# NULs of broken fonts.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\ufffe\uffff]")
_MARKED_HYPHEN = re.compile(rf"[{HYPHEN_MARKS}]\n?(?=(.))", re.S)
# A letter, a hyphen at the end of the line, a lower-case letter on the next one.
_LINE_END_HYPHEN = re.compile(r"(?<=[^\W\d_])-\n(?=[^\W\d_])")
_TRAILING_SPACE = re.compile(r"[ \t]+\n")
_MANY_BLANK_LINES = re.compile(r"\n{3,}")


def clean_page_text(raw: str) -> str:
    """One page's text with words whole, ligatures folded and no control characters."""
    text = raw.replace("\r\n", "\n").replace("\r", "\n")
    text = _MARKED_HYPHEN.sub(_rejoin_marked, text)
    text = _LINE_END_HYPHEN.sub(_rejoin_line_end, text)
    # NFKC folds ligatures ("ﬁ" → "fi"), presentation forms and no-break spaces, so that
    # words match searches.
    text = unicodedata.normalize("NFKC", text)
    text = _CONTROL.sub("", text)
    text = _TRAILING_SPACE.sub("\n", text)
    return _MANY_BLANK_LINES.sub("\n\n", text).strip()


def _rejoin_marked(match: re.Match[str]) -> str:
    following = match.group(1)
    return "-" if following.isupper() or following.isdigit() else ""


def _rejoin_line_end(match: re.Match[str]) -> str:
    following = match.string[match.end()]
    return "-" if following.isupper() else ""
