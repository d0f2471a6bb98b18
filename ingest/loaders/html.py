"""Web pages: the main text (no menus, footers or cookie banners) and the page's title.

trafilatura does the extraction: it is maintained, works offline on the bytes it is given,
and finds the encoding from the page itself when the server did not say.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

import lxml.html
import trafilatura

from ingest.passages import LoaderError, Passage
from ingest.structure import label, named_headings, starts_from_headings
from texts import Text

READER = Text("web page (%(extractor)s)", extractor="trafilatura")


@dataclass(frozen=True)
class WebPage:
    title: str  # "" when the page has none
    passages: list[Passage]


def load(path: Path, *, charset: str = "") -> WebPage:
    return extract(path.read_bytes(), charset=charset)


def extract(content: bytes, *, charset: str = "") -> WebPage:
    html: bytes | str = content
    if charset:
        # An unknown charset name leaves the bytes to trafilatura's own detection.
        with contextlib.suppress(LookupError):
            html = content.decode(charset, errors="replace")
    try:
        document = trafilatura.bare_extraction(
            html, with_metadata=True, include_comments=False, include_tables=True
        )
    except Exception as exc:  # lxml raises a handful of types for malformed documents
        raise LoaderError(
            Text("This web page could not be read as HTML (%(error)s).", error=str(exc))
        ) from exc
    text = (getattr(document, "text", None) or "").replace("\x00", "").strip()
    title = " ".join((getattr(document, "title", None) or "").split())
    if not text:
        raise LoaderError(
            Text(
                "No main text was found on this web page: it may be empty, made only of "
                "navigation, or built by JavaScript in the browser (which Loupe does not run)."
            )
        )
    # The page's own <h1>-<h6>, found among the lines of its main text, give the sections.
    # trafilatura keeps a page's first heading as its title, out of the text: that heading
    # then heads every section, as it heads the page.
    headings = _headings(html)
    found = named_headings(text, headings)
    carried: tuple[str, ...] = ()
    if headings and headings[0][0] == 0 and not any(h[1] == 0 for h in found):
        carried = (label(headings[0][1]),) if headings[0][1] else ()
    sections, _ = starts_from_headings(found, carried=carried)
    return WebPage(title=title, passages=[Passage(text=text, page=None, sections=sections)])


def _headings(html: bytes | str) -> list[tuple[int, str]]:
    """(level from 0, text) of the page's headings in document order; none if it cannot
    be parsed (trafilatura has read its text all the same)."""
    try:
        tree = lxml.html.fromstring(html)
    except Exception:  # lxml raises a handful of types for malformed documents
        return []
    return [
        (int(element.tag[1]) - 1, " ".join(element.text_content().split()))
        for element in tree.iter("h1", "h2", "h3", "h4", "h5", "h6")
    ]
