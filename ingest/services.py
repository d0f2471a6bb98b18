"""Adding sources and turning them into chunks with vectors."""

from __future__ import annotations

import hashlib
import logging
import re
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit, urlunsplit

from django.conf import settings
from django.contrib.auth.models import User
from django.core.files.base import ContentFile, File
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _
from procrastinate.contrib.django.models import ProcrastinateJob

from billing.services import credit_spent_text, deferred_usage, has_credit, usage_for
from generation.summaries import summarize
from ingest import chunk_rows
from ingest.chunker import chunk_passages
from ingest.fetch import Fetched, fetch
from ingest.loaders import detect_kind, html, load_passages
from ingest.loaders.pdf import PageProgress
from ingest.passages import LoaderError, Passage
from ingest.url_guard import UrlRefused, parse_url
from library import embedding_state
from library.files import local_copy
from library.languages import detect_language, search_config
from library.models import Chunk, ChunkEmbedding, ChunkWindow, EmbeddingState, Source
from library.vector_indexes import ensure_model_indexes_quietly
from notebooks.guides import write_guide
from notebooks.models import Notebook, NotebookSource
from ops import recovery
from ops.database import is_lost_database
from providers import vision
from providers.errors import ProviderError
from retrieval import windows
from texts import Text, assign, columns, message_of, translated
from texts.errors import UserFacingError

logger = logging.getLogger(__name__)


# The rest of a long source's embedding waits behind new sources (procrastinate runs the
# highest priority first; new jobs have 0).
CONTINUATION_PRIORITY = -1
# Batches last about FAST_BATCH_SECONDS to SLOW_BATCH_SECONDS: a batch is what a source
# added meanwhile may have to wait for (a job yields between batches), and the local e5
# takes ~5 s for 8 chunks on a quiet machine, 30 s on a loaded one (bench/README.md, row 1).
FAST_BATCH_SECONDS = 1.0
SLOW_BATCH_SECONDS = 2.5
MAX_EMBED_CHUNKS = 512
# The batch size each embedding model reached in this process: a job starts where the last
# one left off rather than at INGEST_EMBED_CHUNKS again, whatever the model's speed here.
_batch_sizes: dict[str, int] = {}


class UploadRejected(UserFacingError):
    """The upload cannot become a source; the message says why and what to do."""


@dataclass(frozen=True)
class AddedSource:
    source: Source
    created: bool  # False: the same bytes were already in the owner's library


def _hash_and_size(upload: File) -> tuple[str, int, bytes]:
    digest = hashlib.sha256()
    size = 0
    head = b""
    upload.seek(0)
    for piece in upload.chunks():
        if not head:
            head = piece[:2048]
        digest.update(piece)
        size += len(piece)
        if size > settings.UPLOAD_MAX_BYTES:
            raise UploadRejected(
                _("%(name)s is larger than %(mib)s MiB (UPLOAD_MAX_BYTES).")
                % {"name": upload.name, "mib": settings.UPLOAD_MAX_BYTES // (1024 * 1024)}
            )
    upload.seek(0)
    return digest.hexdigest(), size, head


def add_source(
    *, owner: User, notebook: Notebook, upload: File, pdf_capture: str | None = None
) -> AddedSource:
    """Store an upload in the owner's library, link it to the notebook and queue it.

    `pdf_capture` (text, vision or auto; None: auto) is how a new PDF source is read.

    The same bytes from the same owner link the existing source: nothing is stored or
    embedded twice. A source that failed before is queued again, since the cause (a
    model server down, say) may be gone.
    """

    filename = Path(upload.name or "upload").name
    sha256, size, head = _hash_and_size(upload)
    if size == 0:
        raise UploadRejected(_("%(name)s is empty.") % {"name": filename})
    try:
        kind = detect_kind(filename, head)
    except LoaderError as exc:
        raise UploadRejected(str(exc)) from exc
    pdf_capture = pdf_capture or Source.PdfCapture.AUTO
    if pdf_capture not in Source.PdfCapture.values:
        raise UploadRejected(
            f"Unknown PDF capture mode {pdf_capture!r}; use one of "
            f"{', '.join(Source.PdfCapture.values)}."
        )

    with transaction.atomic():
        source = Source.objects.select_for_update().filter(owner=owner, sha256=sha256).first()
        if source is None:
            source = _web_source_with_bytes(owner=owner, sha256=sha256, size=size)
        created = source is None
        if source is None:
            source = Source(
                owner=owner,
                kind=kind,
                pdf_capture=pdf_capture,
                title=Path(filename).stem or filename,
                filename=filename,
                sha256=sha256,
                size_bytes=size,
            )
            source.file.save(filename, upload, save=False)
            try:
                with transaction.atomic():
                    source.save()
            except IntegrityError:
                # Another request stored the same bytes a moment ago; use theirs.
                source.file.delete(save=False)
                source = Source.objects.get(owner=owner, sha256=sha256)
                created = False
        _link_and_queue(source, notebook=notebook, created=created)
    return AddedSource(source=source, created=created)


def _web_source_with_bytes(*, owner: User, sha256: str, size: int) -> Source | None:
    """The owner's fetched web source whose file has exactly these bytes, if any.

    Web sources are keyed by their address (there are no bytes when one is added), so
    their content is found by size first and then compared by hash: few files share a size.
    """
    candidates = Source.objects.filter(owner=owner, kind=Source.Kind.URL, size_bytes=size)
    for candidate in candidates.exclude(file=""):
        digest = hashlib.sha256()
        try:
            with candidate.file.open("rb") as stored:
                for piece in stored.chunks():
                    digest.update(piece)
        except OSError:
            continue  # its file is gone; it cannot be the same bytes
        if digest.hexdigest() == sha256:
            return Source.objects.select_for_update().get(pk=candidate.pk)
    return None


def _link_and_queue(source: Source, *, notebook: Notebook, created: bool) -> None:
    """Link the source to the notebook; queue it if new, or again if it failed before.

    Called inside the caller's transaction: the job exists exactly when the row does.
    """
    from ingest.tasks import ingest_source

    # The owner's own link (live whatever becomes of a publication, sharing/access.py).
    NotebookSource.objects.update_or_create(
        notebook=notebook, source=source, defaults={"added_by_id": source.owner_id}
    )
    # Unfinished with no live job (its worker died, or its job ended without finishing it):
    # queued again too, rather than "already in the library" for good.
    stuck = (
        not created and not source.is_finished and not recovery.is_held(recovery.SOURCE, source.pk)
    )
    if created or source.status == Source.Status.FAILED or stuck:
        if stuck:
            recovery.release_dead_jobs(recovery.SOURCE, source.pk)
        source.status = Source.Status.QUEUED
        source.error = ""
        source.save(update_fields=["status", "error", "updated_at"])
        ingest_source.defer(source_id=source.pk)


class AlreadyInLibrary(Exception):
    """A fetched web page has the bytes of a source its owner already has."""

    def __init__(self, existing: Source) -> None:
        super().__init__(f"the same content as “{existing.title}”")
        self.existing = existing


class SourceBusy(UserFacingError):
    """The source is already queued or processing."""


def reprocess_source(*, source: Source) -> Source:
    """Queue a source to be read again: a failed one is retried, a ready one re-processed.

    While it is queued and processed it is not searched; its old chunks are replaced by the
    new ones in one transaction, or kept (unsearched) if reading it fails again.
    """
    from ingest.tasks import ingest_source

    with transaction.atomic():
        source = Source.objects.select_for_update().get(pk=source.pk)
        # Busy only while a live job holds it: one whose worker died, or that ended without
        # finishing it, must not keep it "processing" for good (ops/recovery.py).
        if not source.is_finished and recovery.is_held(recovery.SOURCE, source.pk):
            raise SourceBusy(_("“%(title)s” is already being processed.") % {"title": source.title})
        recovery.release_dead_jobs(recovery.SOURCE, source.pk)
        source.status = Source.Status.QUEUED
        source.error = ""
        source.save(update_fields=["status", "error", "updated_at"])
        ingest_source.defer(source_id=source.pk)
    return source


def process_source(
    *, source_id: int, raise_transient: bool = False, slice_seconds: float | None = None
) -> Source:
    """Process a source at its owner's expense; its usage rows point at the source.

    With `raise_transient`, a transient provider error (a model server down or
    rate-limiting) is raised, for the job to be retried later, and leaves the source as it
    stands (queued again before it is read; ready by its words while it is embedded);
    otherwise it fails the source like any other error.

    With `slice_seconds`, the job stops embedding once it has worked that long and queues
    the rest as a job of its own (`ingest.tasks`), behind sources added meanwhile;
    without, everything is done here.
    """
    with usage_for(source_id=source_id):
        return _process_source(
            source_id=source_id, raise_transient=raise_transient, slice_seconds=slice_seconds
        )


def _process_source(
    *, source_id: int, raise_transient: bool = False, slice_seconds: float | None = None
) -> Source:
    """Read and chunk a source, then embed its chunks; it ends ready, or failed with a reason.

    The chunks are written in one transaction as soon as the source is read, with their
    full-text vectors: from then on the source is ready and searched by its words, while
    its vectors fill in behind, a batch per transaction (a search uses the vectors that
    exist). A crash while reading leaves the old chunks or none; a crash while embedding
    leaves whole chunks, some without a vector, which the next run embeds.
    """
    started = time.monotonic()
    with transaction.atomic():
        source = Source.objects.select_for_update().get(pk=source_id)
        resuming = source.status == Source.Status.READY
        if resuming and source.stage != Source.Stage.EMBEDDING:
            if source.stage:
                # A worker died while writing the summary; the source is ready without one.
                source.stage = Source.Stage.NONE
                source.save(update_fields=["stage", "updated_at"])
            return source
        if not resuming:
            source.status = Source.Status.PROCESSING
            source.error = ""
            source.stage = _first_stage(source)
            source.progress_done = source.progress_total = 0
            source.save(
                update_fields=[
                    "status",
                    "error",
                    "stage",
                    "progress_done",
                    "progress_total",
                    "updated_at",
                ]
            )
    # Checked when the work starts, not only at upload: the queue may have waited while
    # other work spent the credit. Retrying the source after a grant processes it.
    if not has_credit(source.owner):
        _fail(source, credit_spent_text())
        return source

    try:
        if not resuming:
            _read(source)
        until = None if slice_seconds is None else started + slice_seconds
        # A job that only embeds does at least one batch, or slices would hand on the work
        # without doing any; the job that read the source has done its part, but finishes a
        # source that fits in one batch (handing that on would put it behind longer ones).
        at_least_one = resuming or source.chunk_count <= settings.INGEST_EMBED_CHUNKS
        if not _embed_pending(source, until=until, at_least_one=at_least_one):
            _continue_later(source)
    except AlreadyInLibrary as same:
        return _link_instead(source, same.existing)
    except (LoaderError, ProviderError) as exc:
        if raise_transient and isinstance(exc, ProviderError) and exc.transient:
            _queue_again(source, message_of(exc))
            raise
        _fail(source, message_of(exc), read=source.status == Source.Status.READY)
    except Exception as exc:
        if raise_transient and is_lost_database(exc):
            raise  # the job runs again once the database is back (ops/database.py)
        logger.exception("processing source %s failed", source.pk)
        _fail(
            source,
            read=source.status == Source.Status.READY,
            message=Text(
                "Processing failed unexpectedly (%(error)s).",
                error=f"{type(exc).__name__}: {exc}",
            ),
        )
    return source


def _read(source: Source) -> None:
    """Read the source into chunks without vectors, searchable by their words at once, and
    write its summary; the source is then ready, with its chunks still to embed."""
    if source.kind == Source.Kind.URL:
        passages, page_count = _fetch_and_load(source)
    else:
        with local_copy(source.file) as path:
            passages, page_count, reader = load_passages(
                source.kind,
                path,
                pdf_capture=source.pdf_capture,
                user=source.owner,
                on_progress=_page_reporter(source),
            )
        assign(source, "reader", reader)
    drafts = chunk_passages(
        passages, window=settings.CHUNK_TOKENS, overlap=settings.CHUNK_OVERLAP_TOKENS
    )
    if not drafts:
        raise LoaderError(Text("The source contains no words to index."))
    model = embedding_state.active()
    with transaction.atomic():
        # The model whose vectors these chunks will get; the switch (retrieval/reembed.py)
        # sees them under its exclusive lock and embeds them for the next model too.
        state = EmbeddingState.lock_for_writing(model=model.name, dimensions=model.dimensions)
        Chunk.objects.filter(source=source).delete()
        # The full-text vectors, stemmed in the source's language, written with the rows.
        source.language = detect_language(" ".join(draft.text for draft in drafts[:20]))
        source.search_config = search_config(source.language)
        chunk_rows.insert_chunks(
            source_id=source.pk,
            drafts=drafts,
            embedding_model=state.active_model,
            search_config=source.search_config,
        )
        # Ready and answerable by its words now; the summary, then the vectors, follow.
        source.status = Source.Status.READY
        source.stage = Source.Stage.SUMMARIZING
        source.page_count = page_count
        source.chunk_count = len(drafts)
        source.progress_done = 0
        source.progress_total = len(drafts)
        source.save()
    # Neither the summary nor the guide can fail the source.
    _summarize(source, passages)
    _write_guide(source)


def _embed_pending(source: Source, *, until: float | None, at_least_one: bool = True) -> bool:
    """Embed the source's chunks that have no vector yet, a batch per transaction, until
    none is left (True), or (with `until`, a time.monotonic()) until the next batch would
    end after `until` or another ingest job is waiting (False): the job yields."""
    embedded_here = not at_least_one
    last_batch_seconds = 0.0
    _report_progress(
        source,
        stage=Source.Stage.EMBEDDING,
        done=_embedded(source),
        total=source.chunk_count,
    )
    # A full batch that took under a second doubles the next one: a fast embedder (an API,
    # the test server) is not held to a slow local model's batch and its many commits; one
    # that took long shrinks it, as a source added meanwhile may wait for it.
    model = embedding_state.active().name
    size = _batch_sizes.get(model, settings.INGEST_EMBED_CHUNKS)
    while True:
        pending = list(
            Chunk.objects.filter(source=source, embedding__isnull=True)
            .order_by("ordinal")
            .values_list("pk", "text")[:size]
        )
        if not pending:
            Source.objects.filter(pk=source.pk).update(
                stage=Source.Stage.NONE,
                error="",
                error_i18n=None,
                progress_done=source.chunk_count,
                progress_total=source.chunk_count,
                updated_at=timezone.now(),
            )
            source.stage, source.error, source.error_i18n = Source.Stage.NONE, "", None
            source.progress_done = source.progress_total = source.chunk_count
            return True
        if (
            until is not None
            and embedded_here
            and (time.monotonic() + last_batch_seconds > until or _others_waiting())
        ):
            return False
        batch_started = time.monotonic()
        _embed_batch(source, [pk for pk, _ in pending], [text for _, text in pending])
        last_batch_seconds = time.monotonic() - batch_started
        if last_batch_seconds < FAST_BATCH_SECONDS and len(pending) == size:
            size = min(size * 2, MAX_EMBED_CHUNKS)
        elif last_batch_seconds > SLOW_BATCH_SECONDS:
            # As many chunks as would have taken SLOW_BATCH_SECONDS at this batch's pace.
            size = max(1, min(size, int(len(pending) * SLOW_BATCH_SECONDS / last_batch_seconds)))
        _batch_sizes[model] = size
        embedded_here = True
        _report_progress(
            source,
            stage=Source.Stage.EMBEDDING,
            done=_embedded(source),
            total=source.chunk_count,
        )


def forget_batch_sizes() -> None:
    """Start every model's batches at INGEST_EMBED_CHUNKS again (tests)."""
    _batch_sizes.clear()


def _others_waiting() -> bool:
    """Whether another ingest job is due: a source added meanwhile, or another source's
    embedding handed on. A job that embeds yields to it between batches."""
    due = Q(scheduled_at__isnull=True) | Q(scheduled_at__lte=timezone.now())
    return ProcrastinateJob.objects.filter(due, queue_name="ingest", status="todo").exists()


def _embedded(source: Source) -> int:
    return Chunk.objects.filter(source=source, embedding__isnull=False).count()


def _embed_batch(source: Source, ids: list[int], texts: list[str]) -> None:
    """Embed these chunks by the active model (and by the next one, during a switch) and
    write their vectors in one transaction."""
    while True:
        # During a model switch (retrieval/reembed.py) the chunks get the vectors of both
        # models: the active one's serve now, the next one's at the switch.
        model, target = embedding_state.active(), embedding_state.target()
        # With each chunk's parts, for hybrid search (retrieval/windows.py). The calls'
        # usage rows are written together, in one commit instead of one per request.
        with deferred_usage():
            vectors, window_vectors = windows.embed_with_windows(
                texts, model=model, user=source.owner
            )
        next_vectors = next_window_vectors = None
        if target:
            try:
                next_vectors, next_window_vectors = windows.embed_with_windows(
                    texts, model=target, user=source.owner
                )
            except ProviderError as exc:
                # The next model failing must not fail the source: the re-embed job
                # gives these chunks its vectors before it switches.
                logger.warning("embedding source %s by %s: %s", source.pk, target.name, exc)
        with transaction.atomic():
            state = EmbeddingState.lock_for_writing(model=model.name, dimensions=model.dimensions)
            if state.active_model != model.name:
                continue  # the switch happened meanwhile: embed with the new model
            # Only the chunks still waiting: a re-read of the source may have replaced them.
            written = chunk_rows.write_vectors(ids=ids, vectors=vectors, model=model.name)
            kept = [index for index, pk in enumerate(ids) if pk in written]
            if window_vectors:
                ChunkWindow.objects.bulk_create(
                    windows.window_rows(
                        [ids[index] for index in kept],
                        [window_vectors[index] for index in kept],
                        model=model.name,
                    )
                )
            # A switch that began after we read `target` embeds these chunks itself
            # before it switches (it checks under the exclusive lock).
            if target and next_vectors and state.target_model == target.name:
                ChunkEmbedding.objects.bulk_create(
                    ChunkEmbedding(
                        chunk_id=ids[index], model=target.name, embedding=next_vectors[index]
                    )
                    for index in kept
                )
                if next_window_vectors:
                    ChunkWindow.objects.bulk_create(
                        windows.window_rows(
                            [ids[index] for index in kept],
                            [next_window_vectors[index] for index in kept],
                            model=target.name,
                        )
                    )
        # The active model's HNSW and full-text indexes come with its first vectors
        # (after: a no-op).
        ensure_model_indexes_quietly(model=model.name, dimensions=len(vectors[0]))
        return


def _continue_later(source: Source) -> None:
    """Queue the rest of the source's embedding as a job of its own, at a lower priority:
    a source added meanwhile is read (and a small one finished) before it goes on."""
    from ingest.tasks import ingest_source

    ingest_source.configure(priority=CONTINUATION_PRIORITY).defer(source_id=source.pk)


def _summarize(source: Source, passages: list[Passage]) -> None:
    """Write the source's summary; one that cannot be made is left empty, with a note."""
    source.summary, source.summary_mode = "", ""
    assign(source, "summary_error", "")
    try:
        summary = summarize(
            passages=[passage.text for passage in passages],
            title=source.title,
            language=source.language,
            user=source.owner,
            # A generated document is already the model's writing, made from sources
            # with summaries of their own: a model call more would only cost.
            extractive_only=source.kind == Source.Kind.GENERATED,
        )
    except ProviderError as exc:
        logger.warning("summary of source %s failed: %s", source.pk, exc)
        assign(source, "summary_error", Text("No summary: %(reason)s", reason=message_of(exc)))
    except Exception as exc:
        logger.exception("summary of source %s failed", source.pk)
        assign(
            source,
            "summary_error",
            Text("No summary (%(error)s)", error=f"{type(exc).__name__}: {exc}"),
        )
    else:
        source.summary = summary.text
        source.summary_mode = summary.mode if summary.text else ""
    source.stage = Source.Stage.EMBEDDING  # its chunks' vectors come next
    source.save(
        update_fields=[
            "summary",
            "summary_mode",
            "summary_error",
            "summary_error_i18n",
            "stage",
            "updated_at",
        ]
    )


def _write_guide(source: Source) -> None:
    """The source's guide (key topics, questions) for the notebook page, made now so that
    a page view never calls the model; generated documents are shown in the studio,
    without one."""
    if source.kind == Source.Kind.GENERATED:
        return
    try:
        write_guide(source)
    except Exception:
        # The page makes the outline's guide once the ingest is over (notebooks/guides.py).
        logger.exception("guide of source %s failed", source.pk)


def _link_instead(source: Source, existing: Source) -> Source:
    """Link the web source's notebooks to the owner's source with the same bytes instead,
    and remove the web source; the existing one keeps the address it was found at."""
    with transaction.atomic():
        existing = Source.objects.select_for_update().get(pk=existing.pk)
        if not existing.url:
            existing.url = source.url
            existing.save(update_fields=["url", "updated_at"])
        for notebook in Notebook.objects.filter(sources=source):
            _link_and_queue(existing, notebook=notebook, created=False)
        if source.file:
            source.file.delete(save=False)
        source.delete()
    logger.info("web source %s has the bytes of source %s; linked that", source.url, existing.pk)
    return existing


def _queue_again(source: Source, message: Text | str) -> None:
    """The job will run again; the source says why it waits. One already read stays ready
    (searched by its words) with its embedding paused."""
    error = assign(
        source, "error", Text("%(message)s Loupe will try again shortly.", message=message)
    )
    if source.status == Source.Status.READY:
        source.save(update_fields=[*error, "updated_at"])
        return
    source.status = Source.Status.QUEUED
    source.stage = Source.Stage.NONE
    source.save(update_fields=["status", *error, "stage", "updated_at"])


def _fail(source: Source, message: Text | str, *, read: bool = False) -> None:
    """The source failed. One that failed after this run read it (while embedding) loses
    its chunks, so that a failed source never holds chunks half embedded."""
    if read:
        with transaction.atomic():
            Chunk.objects.filter(source=source).delete()
            source.chunk_count = 0
            Source.objects.filter(pk=source.pk).update(chunk_count=0)
            _write_failure(source, message)
        return
    # Two runs of one source can overlap (a worker that lost its heartbeat while finishing
    # it, and the stalled-job retry): the one that lost the race on the chunks must not fail
    # the source the other made ready.
    with transaction.atomic():
        current = Source.objects.select_for_update().filter(pk=source.pk).first()
        if current is not None and current.status == Source.Status.READY:
            logger.warning(
                "source %s: a run failed (%s) after another made it ready", source.pk, message
            )
            source.refresh_from_db()
            return
        _write_failure(source, message)


def _write_failure(source: Source, message: Text | str) -> None:
    source.status = Source.Status.FAILED
    error = assign(source, "error", message)
    source.stage = Source.Stage.NONE
    source.save(update_fields=["status", *error, "stage", "updated_at"])


def _first_stage(source: Source) -> str:
    if source.kind == Source.Kind.URL:
        return Source.Stage.FETCHING
    if source.kind == Source.Kind.AUDIO:
        return Source.Stage.TRANSCRIBING
    return Source.Stage.READING


def _report_progress(
    source: Source,
    *,
    stage: str,
    done: int = 0,
    total: int = 0,
    reader: Text | str | None = None,
) -> None:
    """Say what the worker is doing, in a short UPDATE of its own: it commits at once (no
    transaction is open here), so the page shows it while the source processes."""
    fields: dict[str, object] = {"stage": stage, "progress_done": done, "progress_total": total}
    if reader is not None:
        fields.update(columns("reader", reader))
    Source.objects.filter(pk=source.pk).update(**fields)


def _page_reporter(source: Source) -> PageProgress:
    # While pages are read as images, `reader` names who reads them (the local OCR or a
    # vision model at an API) for the progress label; the finished source gets the final
    # reader with its other fields.
    images_reader = vision.active_reader()
    last_written = [0.0]

    def report(done: int, total: int, by_vision: bool) -> None:
        # A text layer reads in milliseconds a page and the page polls every 2 s: an UPDATE
        # (and its commit) per page was a fifth of a long PDF's time outside pypdf. At most
        # four a second, and always the last page.
        now = time.monotonic()
        if not by_vision and done < total and now - last_written[0] < 0.25:
            return
        last_written[0] = now
        if by_vision:
            _report_progress(
                source,
                stage=Source.Stage.READING_IMAGES,
                done=done,
                total=total,
                reader=images_reader,
            )
        else:
            _report_progress(source, stage=Source.Stage.READING, done=done, total=total)

    return report


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
        _link_and_queue(source, notebook=notebook, created=created)
    return AddedSource(source=source, created=created)


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


def _fetch_and_load(source: Source) -> tuple[list[Passage], int | None]:
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
    _report_progress(source, stage=Source.Stage.READING)
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
            passages, page_count, reader = load_passages(
                kind,
                path,
                pdf_capture=source.pdf_capture,
                user=source.owner,
                on_progress=_page_reporter(source),
            )
        if kind == "pdf":
            reader = Text("PDF from the web (%(reader)s)", reader=reader)
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
