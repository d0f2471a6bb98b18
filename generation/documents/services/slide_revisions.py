"""A slide of a ready deck rewritten as its reader asks ("shorter", "add the figures"): queued
by the page, written by the chat model in a worker from the passages the deck cites, checked as
a deck's slides are; the deck's exports and searchable copy made again."""

from __future__ import annotations

import json
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.utils.translation import gettext as _

from billing.services import usage_for
from generation.documents import acceptance
from generation.documents.acceptance import Accepted
from generation.documents.deadline import Deadline
from generation.documents.inputs import GenerationFailed
from generation.documents.models import GeneratedDocument, SlideRevision
from generation.documents.services.making import index
from generation.documents.services.media import export_deck, place
from generation.documents.services.writing import LANGUAGES
from generation.documents.structured import InvalidOutput, generate_json
from ops import recovery
from ops.jobs import run_background_work
from providers.chat import chat_available
from texts import Text
from texts.errors import UserFacingError


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
    places = {each.n: place(each.source_title, each.chunk) for each in cited}
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
        what=Text("slide"),
        user=revision.requested_by,
        accept=take,
        passages=len(passages),
        max_tokens=REVISION_OUTPUT_TOKENS,
        deadline=Deadline(),
    )
    revision.report_progress(stage=SlideRevision.Stage.RENDERING)
    revised = {**deck, "slides": list(deck["slides"])}
    revised["slides"][number - 1] = reply.data.data
    export_deck(document, revised, places)
    with transaction.atomic():
        document.content = revised
        document.unsupported_dropped += reply.data.dropped
        document.stage = GeneratedDocument.Stage.INDEXING
        document.save()
    revision.report_progress(stage=SlideRevision.Stage.INDEXING)
    index(document)
    revision.status = SlideRevision.Status.READY
    revision.stage = SlideRevision.Stage.NONE
    revision.save(update_fields=["status", "stage", "updated_at"])
