"""The worker's part: a queued source read, chunked, summarised and embedded; it ends
ready, or failed with a reason."""

from __future__ import annotations

import logging
import time
from pathlib import Path

from django.conf import settings
from django.db import transaction

from billing.services import credit_spent_text, has_credit, usage_for
from ingest import chunk_rows
from ingest.chunker import ChunkDraft, chunk_passages
from ingest.loaders import load_passages
from ingest.passages import LoaderError, Passage
from ingest.services.adding import link_and_queue
from ingest.services.early_vectors import EarlyVectors, asked_early
from ingest.services.embedding import continue_later, embed_pending, embeds_after_reading
from ingest.services.progress import page_reporter
from ingest.services.web_pages import AlreadyInLibrary, fetch_and_load
from ingest.summaries import summarize
from library import embedding_state
from library.files import local_copy
from library.languages import detect_language, search_config
from library.models import Chunk, EmbeddingState, Source
from notebooks.guides import write_guide
from notebooks.models import Notebook
from ops.jobs import run_background_work
from providers.errors import ProviderError
from texts import Text, assign, message_of

logger = logging.getLogger(__name__)


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
    source, resuming = _start(source_id)
    if source.is_finished:
        return source  # read and embedded by an earlier run
    # Checked when the work starts, not only at upload: the queue may have waited while
    # other work spent the credit. Retrying the source after a grant processes it.
    if not has_credit(source.owner):
        source.fail(credit_spent_text())
        return source
    until = None if slice_seconds is None else started + slice_seconds
    same_bytes: Source | None = None

    def read_and_embed() -> None:
        nonlocal same_bytes
        if resuming:
            _embed(source, until=until, resuming=True)
            return
        read = _read(source)
        if isinstance(read, Source):
            same_bytes = read
            return
        passages, page_count = read
        # Cutting and writing a long source's chunks takes seconds after its last page.
        source.report_progress(stage=Source.Stage.INDEXING)
        drafts = _cut(passages)
        # A remote model is asked for the vectors while the words are written (it answers
        # meanwhile), by a job that will embed them; they are written after the words.
        texts = [draft.text for draft in drafts]
        with asked_early(
            texts if embeds_after_reading(chunk_count=len(drafts), until=until) else [],
            model=embedding_state.active(),
            user=source.owner,
        ) as early:
            _write_chunks(source, drafts, page_count=page_count)
            # Neither the summary nor the guide can fail the source.
            _summarize(source, passages)
            _write_guide(source)
            _embed(source, until=until, resuming=False, early=early)

    run_background_work(
        source,
        read_and_embed,
        raise_transient=raise_transient,
        failures=(LoaderError,),
        unexpected=lambda error: Text("Processing failed unexpectedly (%(error)s).", error=error),
        # One read by this run (failing while embedded) loses its chunks.
        fail=lambda message: source.fail(message, read=source.status == Source.Status.READY),
    )
    if same_bytes is not None:
        return _link_instead(source, same_bytes)
    return source


def _start(source_id: int) -> tuple[Source, bool]:
    """The source, processing from its first stage; or, when it was read before (True),
    as it stands: still embedding (its vectors are what is left to do), or finished."""
    with transaction.atomic():
        source = Source.objects.select_for_update().get(pk=source_id)
        if source.status != Source.Status.READY:
            source.start(_first_stage(source))
            return source, False
        if source.stage not in {Source.Stage.NONE, Source.Stage.EMBEDDING}:
            # A worker died while writing the summary or the guide: the source is ready
            # without them, and its vectors are what is left to make.
            source.stage = Source.Stage.EMBEDDING
            source.save(update_fields=["stage", "updated_at"])
        return source, True


def _embed(
    source: Source, *, until: float | None, resuming: bool, early: EarlyVectors | None = None
) -> None:
    """Embed the source's chunks until none is left or `until` has come; then queue the
    rest as a job of its own. `early`: the vectors the job that read the source asked for
    as it wrote the chunks."""
    # A job that only embeds does at least one batch, or slices would hand on the work
    # without doing any; the job that read the source has done its part, but finishes a
    # source that fits in one batch (handing that on would put it behind longer ones).
    at_least_one = resuming or source.chunk_count <= settings.INGEST_EMBED_CHUNKS
    if not embed_pending(source, until=until, at_least_one=at_least_one, early=early):
        continue_later(source)


def _read(source: Source) -> tuple[list[Passage], int | None] | Source:
    """The source's passages and page count; the source is not written yet.

    A web page whose bytes its owner has already (the PDF behind a link they uploaded too)
    is not read: the owner's source with those bytes is returned, for its notebooks to
    link instead."""
    if source.kind == Source.Kind.URL:
        try:
            return fetch_and_load(source)
        except AlreadyInLibrary as same:
            return same.existing
    with local_copy(source.file) as path:
        passages, page_count, reader, title, kind = load_passages(
            source.kind,
            path,
            pdf_capture=source.pdf_capture,
            user=source.owner,
            on_progress=page_reporter(source),
        )
    assign(source, "reader", reader)
    if kind:
        source.kind = kind
    # The PDF's own title over its file name; a title a person gave stays.
    if title and source.title == Path(source.filename).stem:
        source.title = title[:500]
    return passages, page_count


def _cut(passages: list[Passage]) -> list[ChunkDraft]:
    drafts = chunk_passages(
        passages, window=settings.CHUNK_TOKENS, overlap=settings.CHUNK_OVERLAP_TOKENS
    )
    if not drafts:
        raise LoaderError(Text("The source contains no words to index."))
    return drafts


def _write_chunks(source: Source, drafts: list[ChunkDraft], *, page_count: int | None) -> None:
    """Write the chunks without vectors, searchable by their words at once: the source is
    then ready, with its summary and its vectors to come."""
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


def _summarize(source: Source, passages: list[Passage]) -> None:
    """Write the source's summary; one that cannot be made is left empty, with a note."""
    source.summary, source.summary_mode = "", ""
    assign(source, "summary_error", "")
    try:
        summary = summarize(
            passages=passages,
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
    # Then its guide (a generated document has none), then its chunks' vectors.
    has_guide = source.kind != Source.Kind.GENERATED
    source.stage = Source.Stage.WRITING_GUIDE if has_guide else Source.Stage.EMBEDDING
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
            link_and_queue(existing, notebook=notebook, created=False)
        if source.file:
            source.file.delete(save=False)
        source.delete()
    logger.info("web source %s has the bytes of source %s; linked that", source.url, existing.pk)
    return existing


def _first_stage(source: Source) -> str:
    if source.kind == Source.Kind.URL:
        return Source.Stage.FETCHING
    if source.kind == Source.Kind.AUDIO:
        return Source.Stage.TRANSCRIBING
    return Source.Stage.READING
