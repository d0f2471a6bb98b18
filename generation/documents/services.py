"""Making generated documents: queued by a person, written by a worker, then indexed as a
source of kind "generated" so they can be asked about like any other."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.core.files.base import ContentFile
from django.db import transaction
from django.utils import translation
from django.utils.translation import gettext as _

from billing.services import credit_spent_text, has_credit, usage_for
from generation.documents import acceptance, svg
from generation.documents.acceptance import Accepted
from generation.documents.by_passage import write_by_passage
from generation.documents.deadline import Deadline
from generation.documents.inputs import (
    GenerationFailed,
    Inputs,
    fit_material,
    gather,
    material_blocks,
    prompt_budget,
)
from generation.documents.kinds import KINDS, WITHOUT_A_MODEL, kind_module
from generation.documents.markers import cite
from generation.documents.models import DocumentCitation, GeneratedDocument, SlideRevision
from generation.documents.pieces import Piece
from generation.documents.structured import InvalidOutput, generate_json, parse
from language.tokens import estimate_tokens
from library.languages import LANGUAGE_NAMES, detect_language
from library.models import Source
from notebooks.markers import strip_markers
from notebooks.models import Notebook
from ops import recovery
from ops.jobs import run_background_work
from providers.chat import chat_available
from texts import Text, assign, message_of
from texts.errors import UserFacingError

logger = logging.getLogger(__name__)

# Languages a person may ask a document to be written in (ISO 639-1 → name for the prompt).
LANGUAGES = LANGUAGE_NAMES


class DocumentBusy(UserFacingError):
    """The document is queued or being made."""


class NoSourceChosen(UserFacingError):
    """The asker ticked none of the notebook's sources."""


class NoSuchQuestion(UserFacingError):
    """The quiz has no question of that number."""


def needs_a_model(kind: str) -> Text:
    """Why a kind cannot be made without a chat model, and what to do."""
    with translation.override("en"):
        name = str(GeneratedDocument.Kind(kind).label)
    return Text(
        "A %(kind)s needs a chat model: without one it would be made of sentence fragments. "
        "Without a model the studio makes reports (each chapter's key sentences, quoted), "
        "mind maps (the sources' outline), and slide decks and videos of those key sentences. "
        "Run Loupe with its local model (make run) or configure one (OPENAI_BASE_URL and "
        "CHAT_MODEL).",
        kind=Text(name),
    )


def request_document(
    *,
    user: User,
    notebook: Notebook,
    kind: str,
    language: str = "",
    chosen_sources: Sequence[int] | None = None,
    audio_format: str = "",
    length: str = "",
    video_format: str = "",
) -> GeneratedDocument:
    """Queue a document of `kind`; `language` "" lets the sources decide; made from the
    `chosen_sources` only (ids; None: all); an audio overview in `audio_format` at `length`,
    a video overview in `video_format` ("": the defaults). UserFacingError for an unknown
    kind, language, format or length, a format or length for another kind, or no source
    chosen."""
    if kind not in KINDS:
        raise UserFacingError(f"Unknown kind of document {kind!r}; use one of {', '.join(KINDS)}.")
    if language and language not in LANGUAGES:
        raise UserFacingError(f"Unknown language {language!r}; use one of {', '.join(LANGUAGES)}.")
    formats, lengths = GeneratedDocument.AudioFormat, GeneratedDocument.Length
    if audio_format and audio_format not in formats.values:
        raise UserFacingError(
            f"Unknown audio format {audio_format!r}; use one of {', '.join(formats.values)}."
        )
    if length and length not in lengths.values:
        raise UserFacingError(f"Unknown length {length!r}; use one of {', '.join(lengths.values)}.")
    if (audio_format or length) and kind != GeneratedDocument.Kind.AUDIO:
        raise UserFacingError(_("A format and a length are for audio overviews only."))
    video_formats = GeneratedDocument.VideoFormat
    if video_format and video_format not in video_formats.values:
        raise UserFacingError(
            f"Unknown video format {video_format!r}; use one of {', '.join(video_formats.values)}."
        )
    if video_format and kind != GeneratedDocument.Kind.VIDEO:
        raise UserFacingError(_("A video format is for video overviews only."))
    if chosen_sources is not None and not chosen_sources:
        raise NoSourceChosen(_("No source is ticked: tick at least one source to generate from."))
    if kind not in WITHOUT_A_MODEL and not chat_available():
        raise UserFacingError(needs_a_model(kind).translated())
    from generation.tasks import generate_document as task

    with transaction.atomic():
        document = GeneratedDocument.objects.create(
            notebook=notebook,
            owner=user,
            kind=kind,
            requested_language=language,
            source_ids=None if chosen_sources is None else sorted(chosen_sources),
            audio_format=audio_format or formats.DEEP_DIVE,
            length=length or lengths.DEFAULT,
            video_format=video_format or video_formats.EXPLAINER,
        )
        task.defer(document_id=document.pk)
    return document


def retry_document(*, document: GeneratedDocument, user: User) -> GeneratedDocument:
    """Queue a failed (or finished) document to be made again, from the sources as they are.
    Only by whoever made it: a retry is billed to them (PermissionDenied for anyone else)."""
    from generation.tasks import generate_document as task

    if document.owner_id != user.pk:
        raise PermissionDenied(_("Only whoever made this document can try it again."))
    with transaction.atomic():
        document = GeneratedDocument.objects.select_for_update().get(pk=document.pk)
        # Busy only while a live job holds it (ops/recovery.py).
        if not document.is_finished and recovery.is_held(document):
            raise DocumentBusy(f"“{document}” is already being made.")
        recovery.release_dead_jobs(document)
        document.status = GeneratedDocument.Status.QUEUED
        document.error = ""
        document.stage = GeneratedDocument.Stage.NONE
        document.save(update_fields=["status", "error", "stage", "updated_at"])
        task.defer(document_id=document.pk)
    return document


def delete_document(*, document: GeneratedDocument) -> None:
    """Remove the document, its searchable source (and chunks) and its files (audio, video,
    a deck's exports). A job still queued for it finds no row and does nothing."""
    files = [each for each in _files(document) if each]
    with transaction.atomic():
        if document.source_id:
            Source.objects.filter(pk=document.source_id).delete()
        document.delete()
    for each in files:
        each.storage.delete(each.name)


def _files(document: GeneratedDocument) -> list[Any]:
    return [document.audio, document.video, document.pptx, document.pdf]


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
            _index(document)
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
        _index(document)
    return document


def _make(document: GeneratedDocument) -> None:
    deadline = Deadline()
    kind = kind_module(document.kind)
    inputs = gather(
        notebook=document.notebook,
        user=document.owner,
        focus=kind.FOCUS,
        chosen_sources=document.source_ids,
    )
    language = document.requested_language or inputs.language
    notebook_title = document.notebook.title
    document.report_progress(stage=GeneratedDocument.Stage.WRITING)
    if chat_available() and _piece(document, kind) is not None:
        accepted, model = _written_by_passage(document, kind, inputs, language, deadline)
        mode = GeneratedDocument.Mode.LLM
    elif chat_available():
        accepted, model = _written(document, kind, inputs, language, deadline)
        mode = GeneratedDocument.Mode.LLM
    else:
        if document.kind not in WITHOUT_A_MODEL:  # queued while a model was configured
            raise GenerationFailed(needs_a_model(document.kind))
        # An extractive document quotes the sources, so it is in their language whatever
        # was asked (the studio panel says so before it is made, the page after); its fixed
        # phrases (its title) follow that language, never another.
        language = inputs.language
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
                    kind=_kind_name(document),
                    error=str(exc),
                )
            ) from exc
        accepted = Accepted(data=data)
        model, mode = "", GeneratedDocument.Mode.EXTRACTIVE
    data, citations = cite(accepted.data, inputs.hits, attributed=accepted.attributed)
    language = language or detect_language(strip_markers(kind.readable(data))) or ""
    if document.kind == GeneratedDocument.Kind.AUDIO:
        _speak(document, data, language, deadline)
    places = {fields["n"]: _place(fields["source_title"], fields["chunk"]) for fields in citations}
    if document.kind == GeneratedDocument.Kind.SLIDES:
        _export_deck(document, data, places)
    if document.kind == GeneratedDocument.Kind.VIDEO:
        _render_video(document, data, places, language, deadline)
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


def parse_data(data: dict[str, Any], kind: Any, passages: int) -> None:
    """Check data made here (extractive) as strictly as a model's reply."""
    parse(json.dumps(data), kind.SCHEMA, lambda checked: kind.check(checked, passages))


# The most a reply of each kind may run to (max_tokens): the items its instructions ask
# for at their longest, with room to spare; an audio script's depends on its format and
# length (kinds/audio.py). A reply cut off here is repaired once, told so.
OUTPUT_TOKENS = {"report": 2000, "quiz": 1600, "table": 1600, "mindmap": 1200, "infographic": 1200}
DEFAULT_OUTPUT_TOKENS = 1600


def _written(
    document: GeneratedDocument, kind: Any, inputs: Inputs, language: str, deadline: Deadline
) -> tuple[Accepted, str]:
    """The kind's JSON written by the chat model from the material (condensed to fit), as
    acceptance.py keeps it: claims attributed, unsupported ones left out."""
    where = LANGUAGES.get(language, language)
    schema, instructions, max_tokens = kind.SCHEMA, kind.INSTRUCTIONS, None
    if document.kind == GeneratedDocument.Kind.AUDIO:
        schema = kind.schema(document.audio_format, document.length)
        instructions = kind.instructions(document.audio_format, document.length)
        max_tokens = kind.output_tokens(document.audio_format, document.length)
    elif document.kind in DECKS:
        schema, instructions, max_tokens = kind.prompt(document.video_format)
    elif document.kind == GeneratedDocument.Kind.REPORT:
        schema = kind.WRITTEN_SCHEMA  # bounded, where an extractive report is not
    system = instructions + (
        f"\n\nWrite in {where}: every field, the title and headings too, even where the "
        "material is in another language."
        if where
        else "\n\nWrite in the documents' language."
    )
    output_tokens = max_tokens or OUTPUT_TOKENS.get(document.kind, DEFAULT_OUTPUT_TOKENS)
    schema_tokens = estimate_tokens(system, str(schema)) + 200
    budget = prompt_budget(output_tokens) - schema_tokens
    if budget < 200:
        raise GenerationFailed(
            Text(
                "The chat model's prompt (GENERATION_INPUT_TOKENS %(budget)s, context "
                "CHAT_CONTEXT_TOKENS %(context)s) leaves no room for the material of a "
                "%(kind)s after its instructions and its reply; raise them.",
                budget=settings.GENERATION_INPUT_TOKENS,
                context=settings.CHAT_CONTEXT_TOKENS,
                kind=document.kind,
            )
        )

    def report(done: int, total: int) -> None:
        document.report_progress(stage=GeneratedDocument.Stage.CONDENSING, done=done, total=total)

    material = fit_material(
        material_blocks(inputs),
        kind=document.get_kind_display(),
        user=document.owner,
        budget=budget,
        on_progress=report,
        deadline=deadline,
    )
    document.report_progress(stage=GeneratedDocument.Stage.WRITING)
    passages = [hit.chunk.text for hit in inputs.hits]
    # Written in another language than the sources: words cannot show support.
    cross_language = bool(language and inputs.language and language != inputs.language)

    def take(data: dict[str, Any]) -> Accepted:
        accepted = acceptance.accept(document.kind, data, passages, translated=cross_language)
        if document.kind == GeneratedDocument.Kind.AUDIO and document.audio_format != "brief":
            accepted.data = acceptance.merge_turns(accepted.data)
        try:
            kind.check(accepted.data, len(passages))
        except InvalidOutput as exc:
            raise InvalidOutput(str(exc), details=accepted.problems + exc.details) from exc
        _check_language(kind.readable(accepted.data), language)
        return accepted

    reply = generate_json(
        system=system,
        material=f"Notebook: {document.notebook.title}\n\n{material}",
        schema=schema,
        name=document.kind,
        user=document.owner,
        accept=take,
        passages=len(passages) if acceptance.cites(document.kind) else 0,
        max_tokens=output_tokens,
        deadline=deadline,
        # The words written so far: minutes of a slow model show as movement.
        on_written=lambda text: document.report_progress(
            stage=GeneratedDocument.Stage.WRITING, done=len(text.split())
        ),
    )
    return reply.data, reply.model


def _piece(document: GeneratedDocument, kind: Any) -> Piece | None:
    """What the kind asks of one passage, when documents are written a passage at a time
    (GENERATION_BY_PASSAGE) and the kind can be."""
    if not settings.GENERATION_BY_PASSAGE:
        return None
    if document.kind == GeneratedDocument.Kind.VIDEO:
        piece: Piece = kind.by_passage(document.video_format)
        return piece
    if document.kind == GeneratedDocument.Kind.AUDIO:
        piece = kind.by_passage(document.audio_format, document.length)
        return piece
    return getattr(kind, "BY_PASSAGE", None)


def _written_by_passage(
    document: GeneratedDocument, kind: Any, inputs: Inputs, language: str, deadline: Deadline
) -> tuple[Accepted, str]:
    """The kind's data written one passage at a time (by_passage.py)."""
    piece = _piece(document, kind)
    assert piece is not None
    where = LANGUAGES.get(language, language)
    written_in = (
        f"Write in {where}, even where the text is in another language."
        if where
        else "Write in the text's language."
    )

    def check_part(data: dict[str, Any]) -> None:
        _check_language(" ".join(_texts(data)), language, least=PART_LANGUAGE_WORDS)

    # The title and what code writes around the model's pieces (a table's column names, an
    # audio script's welcome) in the language the document is written in.
    with translation.override(language or settings.LANGUAGE_CODE):
        return write_by_passage(
            kind=document.kind,
            piece=piece,
            check=kind.check,
            check_part=check_part,
            inputs=inputs,
            written_in=written_in,
            title=piece.title(document.notebook.title),
            translated=bool(language and inputs.language and language != inputs.language),
            user=document.owner,
            deadline=deadline,
            on_progress=lambda done, total: document.report_progress(
                stage=GeneratedDocument.Stage.WRITING, done=done, total=total
            ),
        )


def _texts(data: Any) -> list[str]:
    """Every string in `data`, in order."""
    if isinstance(data, str):
        return [data]
    if isinstance(data, dict):
        return [text for value in data.values() for text in _texts(value)]
    if isinstance(data, list):
        return [text for value in data for text in _texts(value)]
    return []


LANGUAGE_CHECK_WORDS = 25
# A passage's piece is short: py3langid tells a dozen words' language ("ACPI: newer
# framework for the power management system than APM" in a German deck), where 25 let
# two English flashcards through.
PART_LANGUAGE_WORDS = 12


def _check_language(text: str, language: str, *, least: int = LANGUAGE_CHECK_WORDS) -> None:
    """InvalidOutput when a model wrote in another language than the one asked for (a small
    model given English material tends to answer in English); `least` words are needed to
    tell."""
    text = strip_markers(text)
    if len(text.split()) < least:
        return  # too little to tell reliably (a mind map's labels)
    written = detect_language(text)
    if language and written and written != language:
        raise InvalidOutput(
            f"it is written in {LANGUAGES.get(written, written)}, not in "
            f"{LANGUAGES.get(language, language)}; write every field in "
            f"{LANGUAGES.get(language, language)}"
        )


def _speak(
    document: GeneratedDocument, data: dict[str, Any], language: str, deadline: Deadline
) -> None:
    """The script spoken as an MP3; an engine that is missing or fails fails the document
    with its message (synthesize_dialogue says what to configure)."""
    from generation.speech import synthesize_dialogue

    document.report_progress(stage=GeneratedDocument.Stage.SPEAKING)
    turns = [(turn["speaker"], strip_markers(turn["text"])) for turn in data["turns"]]
    try:
        spoken = synthesize_dialogue(
            turns, language=language, user=document.owner, before_each=deadline.check
        )
    except ValueError as exc:
        raise GenerationFailed(
            Text("The script cannot be spoken: %(error)s.", error=message_of(exc))
        ) from exc
    if document.audio:
        document.audio.delete(save=False)
    document.audio.save(f"overview-{document.pk}.mp3", ContentFile(spoken.mp3), save=False)
    document.audio_seconds = round(spoken.seconds, 2)
    assign(document, "audio_engine", spoken.engine)


DECKS = (GeneratedDocument.Kind.SLIDES, GeneratedDocument.Kind.VIDEO)


def _place(source_title: str, chunk: Any) -> str:
    """Where a passage is, for a slide's footnote: "Manual, p. 12"."""
    page = (chunk.page_label or chunk.page) if chunk is not None else None
    return f"{source_title}, p. {page}" if page else source_title


def _export_deck(document: GeneratedDocument, data: dict[str, Any], places: dict[int, str]) -> None:
    """The deck's PPTX and PDF, replacing the files of an earlier making."""
    from generation.documents import decks

    document.report_progress(stage=GeneratedDocument.Stage.RENDERING)
    for field, suffix, made in (
        (document.pptx, "pptx", decks.pptx_bytes(data, places)),
        (document.pdf, "pdf", decks.pdf_bytes(data, places)),
    ):
        if field:
            field.delete(save=False)
        field.save(f"slides-{document.pk}.{suffix}", ContentFile(made), save=False)


def _render_video(
    document: GeneratedDocument,
    data: dict[str, Any],
    places: dict[int, str],
    language: str,
    deadline: Deadline,
) -> None:
    """The narrated slides as an MP4; a missing speech engine or a bound passed fails the
    document saying so, and keeps no file."""
    from generation.documents import video

    def report(done: int, total: int) -> None:
        document.report_progress(stage=GeneratedDocument.Stage.RENDERING, done=done, total=total)

    report(0, len(data["slides"]) + 1)
    try:
        rendered = video.render(
            data,
            places,
            language=language,
            user=document.owner,
            remaining=deadline.remaining,
            on_progress=report,
        )
    except ValueError as exc:
        raise GenerationFailed(
            Text("The narration cannot be spoken: %(error)s.", error=message_of(exc))
        ) from exc
    if document.video:
        document.video.delete(save=False)
    document.video.save(f"overview-{document.pk}.mp4", ContentFile(rendered.mp4), save=False)
    document.video_seconds = round(rendered.seconds, 2)
    assign(document, "audio_engine", rendered.engine)


class NoSuchSlide(UserFacingError):
    """The deck has no slide of that number."""


class RevisionBusy(UserFacingError):
    """A slide of the deck is being revised already."""


REVISION_MAX_CHARS = 500
REVISION_OUTPUT_TOKENS = 700  # one slide of five bullets and its notes, with room to spare


def request_slide_revision(
    *, document: GeneratedDocument, number: int, instruction: str, user: User
) -> SlideRevision:
    """Queue slide `number` (1-based) of a ready deck to be rewritten as `instruction` asks
    ("shorter", "add the figures"), by a worker (`revise_slide`): the model's reply can
    take a minute, which no web request should wait for. One revision of a deck at a time:
    each remakes the deck's exports. UserFacingError for no such slide, no instruction, no
    chat model, or a revision of the deck under way."""
    from generation.tasks import revise_slide as task

    if document.kind != GeneratedDocument.Kind.SLIDES or document.status != "ready":
        raise UserFacingError(_("Only a ready slide deck has slides to revise."))
    if not 1 <= number <= len(document.data.get("slides") or []):
        raise NoSuchSlide(_("The deck has no slide %(number)s.") % {"number": number})
    instruction = " ".join(instruction.split())
    if not instruction:
        raise UserFacingError(
            _("Say how to revise the slide, e.g. “shorter” or “add the figures”.")
        )
    if len(instruction) > REVISION_MAX_CHARS:
        raise UserFacingError(
            _("Keep the instruction under %(count)s characters.") % {"count": REVISION_MAX_CHARS}
        )
    if not chat_available():
        raise UserFacingError(
            _("Revising a slide needs a chat model; Loupe has none configured or running.")
        )
    with transaction.atomic():
        # The deck's row lock makes two requests at once take turns here.
        GeneratedDocument.objects.select_for_update().get(pk=document.pk)
        under_way = SlideRevision.objects.filter(
            document=document,
            status__in=[SlideRevision.Status.QUEUED, SlideRevision.Status.PROCESSING],
        )
        busy = [each for each in under_way if recovery.is_held(each)]
        if busy:
            raise RevisionBusy(
                _("Slide %(number)s of this deck is being revised; try again when it is done.")
                % {"number": busy[0].number}
            )
        revision = SlideRevision.objects.create(
            document=document, number=number, instruction=instruction, requested_by=user
        )
        task.defer(revision_id=revision.pk)
    return revision


def revise_slide(*, revision_id: int, raise_transient: bool = False) -> SlideRevision:
    """The worker's part of a revision: the slide rewritten by the chat model from the
    passages the deck cites, billed to whoever asked; the other slides stay as they are. The
    new slide is checked as a deck's are (bullets no passage supports left out and
    counted); its exports and searchable copy are made again. A reply invalid twice, or a
    deck no longer there to revise, fails the revision with the reason and leaves the slide
    as it was; a transient model error (with `raise_transient`) queues it again."""
    with transaction.atomic():
        revision = (
            SlideRevision.objects.select_for_update()
            .select_related("document", "requested_by")
            .get(pk=revision_id)
        )
        if revision.is_finished:  # a job run twice (a stalled worker's job retried)
            return revision
        revision.start(SlideRevision.Stage.REVISING)

    def run() -> None:
        with usage_for(notebook_id=revision.document.notebook_id):
            _revise(revision)

    run_background_work(
        revision,
        run,
        raise_transient=raise_transient,
        failures=(GenerationFailed,),
        unexpected=lambda error: Text(
            "Revising the slide failed unexpectedly (%(error)s).", error=error
        ),
    )
    return revision


def _revise(revision: SlideRevision) -> None:
    from generation.documents.kinds import slides

    document, number = revision.document, revision.number
    deck = document.data
    if document.status != "ready" or not 1 <= number <= len(deck.get("slides") or []):
        raise GenerationFailed(Text("The deck changed meanwhile: it has no slide to revise."))
    if not chat_available():
        raise GenerationFailed(
            Text("Revising a slide needs a chat model; Loupe has none configured or running.")
        )
    cited = list(document.citations.select_related("chunk__source").order_by("n"))
    languages = {each.chunk.source.language for each in cited if each.chunk is not None}
    cross_language = bool(document.language) and document.language not in languages
    passages = [each.chunk.text if each.chunk is not None else "" for each in cited]
    places = {each.n: _place(each.source_title, each.chunk) for each in cited}
    blocks = [
        f"[{each.n}] ({places[each.n]})\n{text.strip()}"
        for each, text in zip(cited, passages, strict=True)
        if text
    ]
    current = deck["slides"][number - 1]
    where = LANGUAGES.get(document.language, document.language)
    system = slides.REVISE_INSTRUCTIONS + (f"\n\nWrite in {where}." if where else "")
    material = (
        f"The deck: {deck['title']}\n\nSlide {number} now:\n"
        f"{json.dumps(current, ensure_ascii=False)}\n\nRevise it: {revision.instruction}\n\n"
        "Passages:\n\n" + "\n\n".join(blocks)
    )

    def take(data: dict[str, Any]) -> Accepted:
        accepted = acceptance.accept(
            "slides", {"slides": [data]}, passages, translated=cross_language
        )
        if not accepted.data["slides"]:
            raise InvalidOutput(
                "no passage supports any bullet of the slide", details=accepted.problems
            )
        accepted.data = accepted.data["slides"][0]
        return accepted

    reply = generate_json(
        system=system,
        material=material,
        schema=slides.slide_schema(),
        name="slide",
        user=revision.requested_by,
        accept=take,
        passages=len(passages),
        max_tokens=REVISION_OUTPUT_TOKENS,
        deadline=Deadline(),
    )
    revision.report_progress(stage=SlideRevision.Stage.RENDERING)
    revised = {**deck, "slides": list(deck["slides"])}
    revised["slides"][number - 1] = reply.data.data
    _export_deck(document, revised, places)
    with transaction.atomic():
        document.content = revised
        document.unsupported_dropped += reply.data.dropped
        document.stage = GeneratedDocument.Stage.INDEXING
        document.save()
    revision.report_progress(stage=SlideRevision.Stage.INDEXING)
    _index(document)
    revision.status = SlideRevision.Status.READY
    revision.stage = SlideRevision.Stage.NONE
    revision.save(update_fields=["status", "stage", "updated_at"])


def _index(document: GeneratedDocument) -> None:
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


def _kind_name(document: GeneratedDocument) -> Text:
    """The kind's name ("Report"), stored in English and shown in the reader's language:
    the model's choice labels are in the catalogue."""
    with translation.override("en"):
        return Text(str(document.get_kind_display()))


@dataclass(frozen=True)
class QuizResult:
    number: int  # 1-based question number
    correct: bool
    expected: str
    explanation: str


def check_quiz_answer(*, document: GeneratedDocument, number: int, response: str) -> QuizResult:
    """Check one answer to a ready quiz; NoSuchQuestion for no such question, a
    UserFacingError for a response of the wrong form (no option chosen, no text)."""
    from generation.documents.kinds import quiz

    questions = document.data.get("questions") or []
    if document.kind != GeneratedDocument.Kind.QUIZ or not 1 <= number <= len(questions):
        raise NoSuchQuestion(f"The quiz has no question {number}.")
    checked = quiz.check_answer(questions[number - 1], response)
    return QuizResult(number, checked.correct, checked.expected, checked.explanation)


def table_csv(*, document: GeneratedDocument) -> str:
    from generation.documents.kinds import table

    named = {
        cited.n: f"{cited.source_title}" + (f", p. {cited.page}" if cited.page else "")
        for cited in document.citations.all()
    }
    return table.to_csv(document.data, named)


def document_svg(*, document: GeneratedDocument) -> str:
    if document.kind == GeneratedDocument.Kind.MINDMAP:
        return svg.mindmap_svg(document.data)
    if document.kind == GeneratedDocument.Kind.INFOGRAPHIC:
        return svg.infographic_svg(document.data)
    raise ValueError(f"A {document.kind} has no SVG.")


def wait_for_document(
    document_id: int, *, poll_seconds: float = 1.0, idle_seconds: float | None = None
) -> GeneratedDocument:
    """Block until the document is ready (and indexed) or failed. A worker may be making
    it; without one, its own job (and only that) runs in this process (ops/waiting.py).
    Raises ops.waiting.GaveUp when nothing moved for `idle_seconds` (WAIT_IDLE_SECONDS)."""
    from ops.waiting import Waiting, wait_for

    [document] = wait_for(
        Waiting(
            work=recovery.work_for(GeneratedDocument),
            ids=[document_id],
            is_done=lambda document: document.is_finished and not document.stage,
            describe=lambda document: (
                f"{document.get_kind_display()} #{document.pk} is "
                f"{document.status}" + (f" ({document.stage})" if document.stage else "")
            ),
            idle_seconds=settings.WAIT_IDLE_SECONDS if idle_seconds is None else idle_seconds,
            poll_seconds=poll_seconds,
        )
    )
    return document
