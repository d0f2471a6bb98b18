"""The worker's part: a queued document made at its owner's expense, written by the chat
model (writing.py) or, without one, from the sources' own words; its files made (media.py),
its citations stored, then indexed as a source of kind "generated"."""

from __future__ import annotations

import json
import logging
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import translation

from billing.services import credit_spent_text, has_credit, usage_for
from generation.documents.acceptance import Accepted
from generation.documents.by_passage import spared
from generation.documents.deadline import Deadline
from generation.documents.inputs import GenerationFailed, Inputs, gather
from generation.documents.kinds import WITHOUT_A_MODEL, kind_module
from generation.documents.markers import cite
from generation.documents.models import DocumentCitation, GeneratedDocument, kind_name
from generation.documents.services.media import export_deck, place, render_video, speak
from generation.documents.services.writing import piece_for, written, written_by_passage
from generation.documents.structured import InvalidOutput, parse
from library.languages import detect_language
from library.models import Source
from notebooks.markers import strip_markers
from ops.jobs import run_background_work
from providers.chat import chat_available
from texts import Text

logger = logging.getLogger(__name__)


def needs_a_model(kind: str) -> Text:
    """Why a kind cannot be made without a chat model, and what to do."""
    return Text(
        "Making this %(kind)s needs a chat model: without one it would be made of sentence "
        "fragments. "
        "Without a model the studio makes reports (each chapter's key sentences, quoted), "
        "mind maps (the sources' outline), and slide decks and videos of those key sentences. "
        "Run Loupe with its local model (make run) or configure one (OPENAI_BASE_URL and "
        "CHAT_MODEL).",
        kind=kind_name(kind),
    )


def generate_document(*, document_id: int, raise_transient: bool = False) -> GeneratedDocument:
    """The worker's part: make the document at its owner's expense (usage rows point at the
    notebook); it ends ready, or failed with a message.

    With `raise_transient`, a transient provider error (a model server down or rate-limiting)
    puts the document back in the queue and is raised, for the job to be retried later;
    otherwise it fails the document like any other error.
    """
    with transaction.atomic():
        document = (
            GeneratedDocument.objects.select_for_update()
            .select_related("notebook", "owner")
            .get(pk=document_id)
        )
        # A job run twice (a stalled worker's job retried) finds the document made.
        already_made = document.status == GeneratedDocument.Status.READY
        if not already_made:
            document.start(GeneratedDocument.Stage.GATHERING)
    if already_made:
        if document.stage:  # made, but the worker died while indexing it
            index(document)
        return document
    if not has_credit(document.owner):
        document.fail(credit_spent_text())
        return document

    def make() -> None:
        with usage_for(notebook_id=document.notebook_id):
            _make(document)

    made = run_background_work(
        document,
        make,
        raise_transient=raise_transient,
        failures=(GenerationFailed,),
        unexpected=lambda error: Text("Generating failed unexpectedly (%(error)s).", error=error),
    )
    if made:
        index(document)
    return document


def _make(document: GeneratedDocument) -> None:
    deadline = Deadline()
    kind = kind_module(document.kind)
    by_passage = chat_available() and piece_for(document, kind) is not None
    inputs = gather(
        notebook=document.notebook,
        user=document.owner,
        focus=kind.FOCUS,
        chosen_sources=document.source_ids,
        # Written a passage at a time, a passage the model makes nothing of is replaced by
        # one read beside it (by_passage.py): these are read too, asked only then.
        passages=spared(settings.GENERATION_PASSAGES) if by_passage else None,
    )
    language = document.requested_language or inputs.language
    document.report_progress(stage=GeneratedDocument.Stage.WRITING)
    if by_passage:
        accepted, model = written_by_passage(document, kind, inputs, language, deadline)
        mode = GeneratedDocument.Mode.LLM
    elif chat_available():
        accepted, model = written(document, kind, inputs, language, deadline)
        mode = GeneratedDocument.Mode.LLM
    else:
        # An extractive document quotes the sources, so it is in their language whatever
        # was asked (the studio panel says so before it is made, the page after).
        language = inputs.language
        accepted = _extractive(document, kind, inputs, language)
        model, mode = "", GeneratedDocument.Mode.EXTRACTIVE
    data, citations = cite(accepted.data, inputs.hits, attributed=accepted.attributed)
    language = language or detect_language(strip_markers(kind.readable(data))) or ""
    if document.kind == GeneratedDocument.Kind.AUDIO:
        speak(document, data, language, deadline)
    places = {fields["n"]: place(fields["source_title"], fields["chunk"]) for fields in citations}
    if document.kind == GeneratedDocument.Kind.SLIDES:
        export_deck(document, data, places)
    if document.kind == GeneratedDocument.Kind.VIDEO:
        render_video(document, data, places, language, deadline)
    with transaction.atomic():
        document.citations.all().delete()
        DocumentCitation.objects.bulk_create(
            DocumentCitation(document=document, **fields) for fields in citations
        )
        document.content = data
        document.title = str(data.get("title", ""))[:300]
        document.mode = mode
        document.model = model
        document.language = language
        document.unsupported_dropped = accepted.dropped
        if accepted.repeated:
            logger.info(
                "%s #%s: %s repeated claims of the model's left out",
                document.kind,
                document.pk,
                accepted.repeated,
            )
        document.status = GeneratedDocument.Status.READY
        # Ready to read now; the stage is cleared once its searchable copy is indexed.
        document.stage = GeneratedDocument.Stage.INDEXING
        document.save()


def _extractive(document: GeneratedDocument, kind: Any, inputs: Inputs, language: str) -> Accepted:
    """The kind's data made from the sources' own words, without a chat model, checked as
    strictly as a model's reply; its fixed phrases (its title) in `language`, the sources'."""
    if document.kind not in WITHOUT_A_MODEL:  # queued while a model was configured
        raise GenerationFailed(needs_a_model(document.kind))
    notebook_title = document.notebook.title
    with translation.override(language or settings.LANGUAGE_CODE):
        if document.kind == GeneratedDocument.Kind.VIDEO:
            data = kind.extractive(
                inputs, notebook_title=notebook_title, video_format=document.video_format
            )
        else:
            data = kind.extractive(inputs, notebook_title=notebook_title)
    try:
        parse_data(data, kind, len(inputs.hits))
    except InvalidOutput as exc:
        raise GenerationFailed(
            Text(
                "The sources hold too little for an extractive %(kind)s without a chat "
                "model (%(error)s); configure a chat model (OPENAI_BASE_URL and CHAT_MODEL) "
                "or add longer sources.",
                kind=kind_name(document.kind),
                error=str(exc),
            )
        ) from exc
    return Accepted(data=data)


def parse_data(data: dict[str, Any], kind: Any, passages: int) -> None:
    """Check data made here (extractive) as strictly as a model's reply."""
    parse(json.dumps(data), kind.SCHEMA, lambda checked: kind.check(checked, passages))


def index(document: GeneratedDocument) -> None:
    """Make the ready document a source of kind "generated" in its notebook, read, chunked
    and embedded by the normal ingest pipeline (in this job: the worker is already here).
    A failure there leaves the document ready; its source shows why it is not searchable."""
    from ingest.services import add_markdown_source, process_source

    text = strip_markers(kind_module(document.kind).readable(document.data))
    with transaction.atomic():
        old = document.source
        if old is not None:
            old.delete()  # made again: the new text replaces the old source
        source = add_markdown_source(
            owner_id=document.owner_id,
            notebook_id=document.notebook_id,
            kind=Source.Kind.GENERATED,
            title=document.title or str(document),
            key=f"generated:{document.pk}",
            filename=f"{document.kind}-{document.pk}.md",
            text=text,
        )
        document.source = source
        document.save(update_fields=["source", "updated_at"])
    try:
        process_source(source_id=source.pk)
    finally:
        GeneratedDocument.objects.filter(pk=document.pk).update(stage=GeneratedDocument.Stage.NONE)
        document.stage = GeneratedDocument.Stage.NONE
