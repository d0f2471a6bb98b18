"""Files and web pages added to a notebook by their paths and addresses, then waited for:
the `ingest` command's work, one result per path given."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from django.contrib.auth.models import User
from django.core.files import File

from ingest.services.adding import AddedSource, UploadRejected, add_source, printable_name
from ingest.services.web_pages import add_url
from ingest.waiting import source_name, source_progress, wait_for_sources
from library.models import Source
from notebooks.models import Notebook

URL_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")

Say = Callable[[str], None]
# One path's result, as `ingest --json` prints it: source_id, name, kind, status, pages,
# chunks, error.
Result = dict[str, Any]


def add_and_wait(
    *,
    owner: User,
    notebook: Notebook,
    paths: Sequence[str],
    pdf_capture: str,
    idle_seconds: float | None,
    say: Say,
) -> list[Result]:
    """Add each path (a file, or a URL) to the notebook, wait until every source is read,
    and return one result per path, in their order. Raises GaveUp when no source moved for
    `idle_seconds` (the sources stay queued for a worker)."""
    results: list[Result] = []
    # A source's results: more than one when the same bytes came under several names.
    queued: dict[int, list[Result]] = {}
    urls: dict[int, str] = {}
    for raw in paths:
        # Any scheme counts as a URL, so that ftp://… is refused as such, not as a file.
        is_url = bool(URL_SCHEME.match(raw)) and not Path(raw).exists()
        result, added = _add(
            raw, is_url=is_url, owner=owner, notebook=notebook, pdf_capture=pdf_capture
        )
        results.append(result)
        if added is None:
            continue
        queued.setdefault(added.source.pk, []).append(result)
        if is_url:
            urls[added.source.pk] = added.source.url
        if not added.created:
            say(f"{result['name']}: already in the library, linked to the notebook.")

    finished = wait_for_sources(queued, on_poll=_progress_printer(say), idle_seconds=idle_seconds)
    for source in finished:
        for result in queued[source.pk]:
            _describe(result, source)
    _follow_replaced_pages(urls, queued, owner=owner, idle_seconds=idle_seconds, say=say)
    return results


def _add(
    raw: str, *, is_url: bool, owner: User, notebook: Notebook, pdf_capture: str
) -> tuple[Result, AddedSource | None]:
    """Add one path: its result (failed, with why, until the source is read) and what was
    added (None when it was refused)."""
    path = Path(raw)
    result: Result = {
        "source_id": None,
        "name": raw if is_url else printable_name(path.name),
        "kind": None,
        "status": Source.Status.FAILED.value,
        "pages": None,
        "chunks": 0,
        "error": "",
    }
    if not is_url and not path.is_file():
        result["error"] = f"{raw}: no such file."
        return result, None
    try:
        if is_url:
            added = add_url(owner=owner, notebook=notebook, url=raw, pdf_capture=pdf_capture)
        else:
            with path.open("rb") as handle:
                added = add_source(
                    owner=owner,
                    notebook=notebook,
                    upload=File(handle, path.name),
                    pdf_capture=pdf_capture,
                )
    except UploadRejected as exc:
        result["error"] = str(exc)
        return result, None
    result["source_id"] = added.source.pk
    return result, added


def _progress_printer(say: Say) -> Callable[[list[Source]], None]:
    """Says each started, unfinished source's progress, once per change."""
    said: dict[int, str] = {}

    def progress(sources: list[Source]) -> None:
        for source in sources:
            if source.is_finished or source.status == Source.Status.QUEUED:
                continue
            line = f"{source_name(source)}: {source_progress(source)}"
            if said.get(source.pk) != line:
                said[source.pk] = line
                say(line)

    return progress


def _describe(result: Result, source: Source) -> None:
    result.update(
        source_id=source.pk,
        kind=source.kind,
        status=source.status,
        pages=source.page_count,
        chunks=source.chunk_count,
        error=source.error,
    )


def _follow_replaced_pages(
    urls: dict[int, str],
    queued: dict[int, list[Result]],
    *,
    owner: User,
    idle_seconds: float | None,
    say: Say,
) -> None:
    """A web page whose bytes the owner already had is replaced by that source, which keeps
    the page's address (ingest.services.pipeline._link_instead): its results describe that
    source, once it is read."""
    for source_id, url in urls.items():
        if Source.objects.filter(pk=source_id).exists():
            continue
        replacement = (
            Source.objects.filter(owner=owner, url=url).exclude(kind=Source.Kind.URL).first()
        )
        if replacement is None:
            for result in queued[source_id]:
                result["error"] = (
                    "This web page had the content of a source already in the library, "
                    "which the notebook now links."
                )
            continue
        [source] = wait_for_sources([replacement.pk], idle_seconds=idle_seconds)
        say(f"{url}: the same content as {source.title!r}, linked to the notebook.")
        for result in queued[source_id]:
            _describe(result, source)
