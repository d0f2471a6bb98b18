"""A page's text is cleaned so that its words read as words."""

from __future__ import annotations

import pytest

from ingest.loaders.page_text import clean_page_text


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        # PDFium's mark where it removed a hyphen at a line end: the rest of the same word...
        ("distri\ufffebution", "distribution"),
        ("einge\x02bunden", "eingebunden"),
        # ...or, before a capital, the second half of a compound whose hyphen is real.
        ("Windows\ufffeTaste", "Windows-Taste"),
        ("Debian\ufffe\r\nSystem", "Debian-System"),
        # Other extractors keep the hyphen and the line break.
        ("exam-\nple", "example"),
        ("left-\nCtrl", "left-Ctrl"),
        ("version 2-\n3", "version 2-\n3"),
        # PDFium's line ends, ligatures, no-break spaces, control characters.
        ("one\r\ntwo\rthree", "one\ntwo\nthree"),
        ("ﬁsh and ﬂour", "fish and flour"),
        ("a\xa0b", "a b"),
        ("nul\x00 and\x0c feed", "nul and feed"),
        ("end   \n\n\n\n\nnext", "end\n\nnext"),
    ],
)
def test_a_page_text_is_cleaned(raw, clean):
    assert clean_page_text(raw) == clean
