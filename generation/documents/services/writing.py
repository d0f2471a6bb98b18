"""The chat model writes a document's JSON: in one call from the material (condensed to fit
the prompt), or a passage at a time (by_passage.py); either way the reply is kept as
acceptance.py keeps it, in the language asked for."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.utils import translation

from generation.documents import acceptance
from generation.documents.acceptance import Accepted
from generation.documents.by_passage import write_by_passage
from generation.documents.deadline import Deadline
from generation.documents.inputs import (
    GenerationFailed,
    Inputs,
    fit_material,
    material_blocks,
    prompt_budget,
)
from generation.documents.models import GeneratedDocument, kind_name
from generation.documents.pieces import Piece
from generation.documents.structured import InvalidOutput, generate_json
from language.tokens import estimate_tokens
from library.languages import LANGUAGE_NAMES, detect_language
from notebooks.markers import strip_markers
from texts import Text

# Languages a person may ask a document to be written in (ISO 639-1 → name for the prompt).
LANGUAGES = LANGUAGE_NAMES

DECKS = (GeneratedDocument.Kind.SLIDES, GeneratedDocument.Kind.VIDEO)

# The most a reply of each kind may run to (max_tokens): the items its instructions ask
# for at their longest, with room to spare; an audio script's depends on its format and
# length (kinds/audio.py). A reply cut off here is repaired once, told so.
OUTPUT_TOKENS = {"report": 2000, "quiz": 1600, "table": 1600, "mindmap": 1200, "infographic": 1200}
DEFAULT_OUTPUT_TOKENS = 1600


def written(
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
                "CHAT_CONTEXT_TOKENS %(context)s) leaves no room for the material of this "
                "%(kind)s after its instructions and its reply; raise them.",
                budget=settings.GENERATION_INPUT_TOKENS,
                context=settings.CHAT_CONTEXT_TOKENS,
                kind=kind_name(document.kind),
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
            accepted.data = kind.merge_turns(accepted.data)
        try:
            kind.check(accepted.data, len(passages))
        except InvalidOutput as exc:
            raise InvalidOutput(str(exc), details=accepted.problems + exc.details) from exc
        check_language(kind.readable(accepted.data), language)
        return accepted

    reply = generate_json(
        system=system,
        material=f"Notebook: {document.notebook.title}\n\n{material}",
        schema=schema,
        name=document.kind,
        what=kind_name(document.kind),
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


def piece_for(document: GeneratedDocument, kind: Any) -> Piece | None:
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


def written_by_passage(
    document: GeneratedDocument, kind: Any, inputs: Inputs, language: str, deadline: Deadline
) -> tuple[Accepted, str]:
    """The kind's data written one passage at a time (by_passage.py)."""
    piece = piece_for(document, kind)
    assert piece is not None
    where = LANGUAGES.get(language, language)
    written_in = (
        f"Write in {where}, even where the text is in another language."
        if where
        else "Write in the text's language."
    )

    def check_part(data: dict[str, Any]) -> None:
        check_language(" ".join(_texts(data)), language, least=PART_LANGUAGE_WORDS)

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


def check_language(text: str, language: str, *, least: int = LANGUAGE_CHECK_WORDS) -> None:
    """InvalidOutput when a model wrote in another language than the one asked for (a small
    model given English material tends to answer in English)."""
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
