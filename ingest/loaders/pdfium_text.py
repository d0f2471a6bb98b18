"""PDFium's reading of a PDF's text layer, run as a child process of its own.

PDFium is C++: a hostile file can crash it (a segfault, an abort), and a crash in the
worker's process would take the worker down with every job it holds. So the worker runs
this file as a script (`ingest/loaders/pdfium_process.py`) and reads what it prints; a
crash kills only the child, and the source fails saying so.

It imports nothing but the standard library and pypdfium2 (no Django): a child starts in
~0.1 s, and can be started before there is a file for it (waiting_child.py): it reads what
to read as one JSON line on its input ({"path", "max_pages", "text", "part", "parts"}). It
prints JSON, one object a line: first the document's page count, outline and page labels and
metadata title (or why it cannot be opened), then each page's text in page order (with
"text" true).

A long PDF is read by `parts` children at once, on as many cores: the child of `part` k
reads pages k, k + parts, k + 2 × parts … (numbered from 0), and only the first says more of
the document than its page count.

    python -I pdfium_text.py   (then {"path": FILE, "max_pages": N, "text": true} on its input)
"""

from __future__ import annotations

import json
import sys
from typing import Any

import pypdfium2 as pdfium

MAX_OUTLINE_DEPTH = 8
MAX_OUTLINE_ENTRIES = 10_000
MAX_LABEL_CHARS = 40
MAX_TITLE_CHARS = 1_000


def _emit(record: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(record) + "\n")
    sys.stdout.flush()


def _outline(document: pdfium.PdfDocument) -> tuple[list[list[Any]], str]:
    """The bookmarks as [level, title, page number], and what went wrong reading them."""
    entries: list[list[Any]] = []
    try:
        for bookmark in document.get_toc(max_depth=MAX_OUTLINE_DEPTH):
            destination = bookmark.get_dest()
            index = destination.get_index() if destination is not None else None
            if index is None:
                continue
            entries.append([bookmark.level, bookmark.get_title()[:MAX_TITLE_CHARS], index + 1])
            if len(entries) > MAX_OUTLINE_ENTRIES:
                break
    except Exception as exc:  # a hostile outline must not cost the text
        return [], str(exc)
    return entries, ""


def _labels(document: pdfium.PdfDocument, page_count: int) -> tuple[dict[str, str], str]:
    """The printed page numbers that differ from the page's place in the file."""
    labels: dict[str, str] = {}
    try:
        for index in range(page_count):
            printed = " ".join(document.get_page_label(index).split())[:MAX_LABEL_CHARS]
            if printed and printed != str(index + 1):
                labels[str(index + 1)] = printed
    except Exception as exc:
        return {}, str(exc)
    return labels, ""


def _page_text(document: pdfium.PdfDocument, index: int) -> dict[str, str]:
    # get_text_range(), not get_text_bounded(): the bounded text leaves out what runs past
    # the page box (long paths at the margin, a table running off the bottom).
    try:
        page = document[index]
        try:
            textpage = page.get_textpage()
            try:
                return {"text": textpage.get_text_range()}
            finally:
                textpage.close()
        finally:
            page.close()
    except Exception as exc:  # one broken page must not lose the others
        return {"text": "", "error": str(exc)}


def main() -> None:
    first = sys.stdin.readline()
    if not first:
        return  # a waiting reader that was never given a file
    asked = json.loads(first)
    path, max_pages, with_text = asked["path"], int(asked["max_pages"]), bool(asked["text"])
    part, parts = int(asked.get("part", 0)), int(asked.get("parts", 1))
    try:
        document = pdfium.PdfDocument(path)
    except pdfium.PdfiumError as exc:
        _emit({"cannot_open": str(exc)})
        return
    page_count = len(document)
    if not 0 < page_count <= max_pages or part > 0:
        # Out of bounds: the caller refuses it, nothing more to read. A later part: the
        # first part says the rest.
        _emit({"pages": page_count})
    else:
        _describe(document, page_count)
    if with_text and 0 < page_count <= max_pages:
        for index in range(part, page_count, parts):
            _emit(_page_text(document, index))
    document.close()


def _describe(document: pdfium.PdfDocument, page_count: int) -> None:
    """Print the page count, outline, page labels and metadata title."""
    outline, outline_error = _outline(document)
    try:
        title = document.get_metadata_value("Title")[:MAX_TITLE_CHARS]
    except Exception:  # a damaged /Info costs the title, not the text
        title = ""
    labels, labels_error = _labels(document, page_count)
    _emit(
        {
            "pages": page_count,
            "outline": outline,
            "outline_error": outline_error,
            "labels": labels,
            "labels_error": labels_error,
            "title": title,
        }
    )


if __name__ == "__main__":
    main()
