"""Web pages: added by their address, fetched by the worker through the URL guard."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit, urlunsplit

from django.contrib.auth.models import User
from django.core.files.base import ContentFile
from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from ingest.fetch import Fetched, fetch
from ingest.loaders import html, load_passages
from ingest.passages import LoaderError, Passage
from ingest.services.adding import AddedSource, UploadRejected, link_and_queue
from ingest.services.progress import page_reporter
from ingest.url_guard import UrlRefused, parse_url
from library.files import local_copy
from library.models import Source
from notebooks.models import Notebook
from texts import Text, assign, message_of, translated

WEB_PAGE_TYPES = {"text/html", "application/xhtml+xml"}

SCHEME_PREFIX = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")


def normalise_url(url: str) -> str:
    """The form that two additions of the same page share: scheme and host in lower case,
    the default port and the #fragment dropped. Raises UrlRefused for a URL of the wrong form.
    """
    parts = parse_url(url)
    scheme = parts.scheme.lower()
    host = parts.hostname or ""
    netloc = f"[{host}]" if ":" in host else host
    if parts.port and parts.port != (443 if scheme == "https" else 80):
        netloc += f":{parts.port}"
    return urlunsplit((scheme, netloc, parts.path or "/", parts.query, ""))


def add_url(
    *, owner: User, notebook: Notebook, url: str, pdf_capture: str | None = None
) -> AddedSource:
    """Add a web page to the owner's library, link it to the notebook and queue its fetch.

    `pdf_capture` is how the page is read should it turn out to be a PDF (None: auto).

    Only the form of the URL is checked here; the worker resolves the host and fetches it
    through the guard. The same URL from the same owner links the existing source: its
    key (`sha256`) is the hash of the normalised URL, as there are no bytes yet.
    """

    url = url.strip()
    if not url:
        raise UploadRejected(_("Enter the address of a web page, starting with https://."))
    if not SCHEME_PREFIX.match(url):
        url = "https://" + url  # "example.org/page", as people type it
    try:
        normalised = normalise_url(url)
    except UrlRefused as exc:
        raise UploadRejected(translated(message_of(exc))) from exc
    max_length = Source._meta.get_field("url").max_length or 2000
    if len(normalised) > max_length:
        raise UploadRejected(
            _("This web address is longer than %(max)s characters.") % {"max": max_length}
        )
    sha256 = hashlib.sha256(f"url:{normalised}".encode()).hexdigest()
    pdf_capture = pdf_capture or Source.PdfCapture.AUTO
    if pdf_capture not in Source.PdfCapture.values:
        raise UploadRejected(f"Unknown PDF capture mode {pdf_capture!r}.")

    with transaction.atomic():
        source = Source.objects.select_for_update().filter(owner=owner, sha256=sha256).first()
        created = source is None
        if source is None:
            source = Source(
                owner=owner,
                kind=Source.Kind.URL,
                pdf_capture=pdf_capture,
                title=normalised[:500],
                url=normalised,
                sha256=sha256,
            )
            try:
                with transaction.atomic():
                    source.save()
            except IntegrityError:
                # Another request added the same page a moment ago; use theirs.
                source = Source.objects.get(owner=owner, sha256=sha256)
                created = False
        link_and_queue(source, notebook=notebook, created=created)
    return AddedSource(source=source, created=created)


class AlreadyInLibrary(Exception):
    """A fetched web page has the bytes of a source its owner already has."""

    def __init__(self, existing: Source) -> None:
        super().__init__(f"the same content as “{existing.title}”")
        self.existing = existing


def _web_kind(fetched: Fetched) -> str:
    """Which loader reads the fetched bytes: the Content-Type decides, the bytes only
    when the server sent none (or the generic application/octet-stream)."""
    head = fetched.content[:1024]
    if fetched.content_type in WEB_PAGE_TYPES:
        return "html"
    if fetched.content_type == "application/pdf":
        return "pdf"
    if fetched.content_type in {"text/plain", "text/markdown"}:
        return "text"
    if fetched.content_type in {"", "application/octet-stream"}:
        if b"%PDF-" in head:
            return "pdf"
        if head.lstrip().lower().startswith((b"<!doctype html", b"<html")):
            return "html"
    shown = fetched.content_type or Text("no content type")
    raise LoaderError(
        Text(
            "%(url)s is %(type)s, which Loupe cannot read from the web: it reads web pages "
            "(HTML), PDFs and plain text.",
            url=fetched.url,
            type=shown,
        )
    )


def fetch_and_load(source: Source) -> tuple[list[Passage], int | None]:
    """Fetch a web source through the guard, keep the bytes as its file and read them."""
    fetched = fetch(source.url)
    if not source.chunk_count:
        # A page never read before whose bytes the owner already has (the PDF behind a link
        # they uploaded too): its notebooks get that source, nothing is stored or embedded
        # twice. A page read before keeps its source, since answers may cite its chunks.
        digest = hashlib.sha256(fetched.content).hexdigest()
        same = (
            Source.objects.filter(owner=source.owner, sha256=digest)
            .exclude(pk=source.pk)
            .exclude(kind=Source.Kind.GENERATED)
            .first()
        )
        if same is not None:
            raise AlreadyInLibrary(same)
    kind = _web_kind(fetched)
    source.report_progress(stage=Source.Stage.READING)
    suffix = {"html": ".html", "pdf": ".pdf", "text": ".txt"}[kind]
    stem = Path(unquote(urlsplit(fetched.url).path)).stem[:100] or "page"
    if source.file:
        source.file.delete(save=False)  # fetched again: the page may have changed
    source.file.save(f"{stem}{suffix}", ContentFile(fetched.content), save=False)
    source.filename = Path(source.file.name or "").name
    source.size_bytes = len(fetched.content)
    page_count: int | None = None
    if kind == "html":
        page = html.extract(fetched.content, charset=fetched.charset)
        passages = page.passages
        source.title = (page.title or source.url)[:500]
        assign(source, "reader", html.READER)
    else:
        with local_copy(source.file) as path:
            passages, page_count, reader, title, _kind = load_passages(
                kind,
                path,
                pdf_capture=source.pdf_capture,
                user=source.owner,
                on_progress=page_reporter(source),
            )
        if kind == "pdf":
            reader = Text("PDF from the web (%(reader)s)", reader=reader)
            # Like a web page's <title>: better than the address it was added by.
            source.title = (title or source.title)[:500]
        assign(source, "reader", reader)
    source.save(
        update_fields=[
            "file",
            "filename",
            "size_bytes",
            "title",
            "reader",
            "reader_i18n",
            "updated_at",
        ]
    )
    return passages, page_count
