"""A document written a passage at a time (GENERATION_BY_PASSAGE; on for the local model).

A 1.5B model asked for a whole report, quiz or deck from eight passages copies them or
invents (docs/decisions.md). Asked about one passage at a time, with a short schema, it
writes what that passage says. Loupe cites the passage after each claim, keeps only the
claims the passage supports (acceptance.py), and assembles the kind's document in code.

A passage whose reply is invalid twice, or unsupported, is left out and counted; the
document fails only when no passage gave anything."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from django.contrib.auth.models import User

from generation.documents import acceptance
from generation.documents.acceptance import Accepted
from generation.documents.deadline import Deadline
from generation.documents.inputs import GenerationFailed, Inputs, passage_place
from generation.documents.pieces import First, Piece
from generation.documents.structured import InvalidOutput, StructuredReply, generate_json
from texts import Text

logger = logging.getLogger(__name__)


def spread(count: int, most: int) -> list[int]:
    """The numbers (1-based) of at most `most` of `count` passages, evenly spaced from the
    first to the last (0: all of them)."""
    if not most or count <= most:
        return list(range(1, count + 1))
    return sorted({1 + round(index * (count - 1) / (most - 1)) for index in range(most)})


def _said(data: Any) -> bool:
    """Whether `data` holds any text."""
    if isinstance(data, str):
        return bool(data.strip())
    if isinstance(data, dict):
        return any(_said(value) for value in data.values())
    if isinstance(data, list):
        return any(_said(value) for value in data)
    return False


OPENING_CHARS = 300  # of each passage, for the first call: enough to say what it is about


def _decided(
    first: First,
    inputs: Inputs,
    numbers: list[int],
    *,
    written_in: str,
    user: User,
    deadline: Deadline,
) -> Piece:
    """The piece to ask of each passage, as the first call decides it from every passage's
    place and opening."""
    openings = [
        f"From {passage_place(inputs.hits[number - 1])}:\n"
        + inputs.hits[number - 1].chunk.text.strip()[:OPENING_CHARS]
        for number in numbers
    ]
    reply = generate_json(
        system=f"{first.instructions}\n\n{written_in}",
        material="\n\n".join(openings),
        schema=first.schema,
        name="plan",
        user=user,
        accept=first.then,
        passages=0,
        max_tokens=first.max_tokens,
        deadline=deadline,
    )
    return reply.data


def _material(inputs: Inputs, number: int) -> str:
    """The passage, where it stands, without its number (the model writes no markers)."""
    hit = inputs.hits[number - 1]
    # No page number: shown one, the model wrote "Debian Reference, page 123" as a card's front.
    return f"From {passage_place(hit, page=False)}:\n\n{hit.chunk.text.strip()}"


def write_by_passage(
    *,
    kind: str,
    piece: Piece,
    check: Callable[[dict[str, Any], int], None],
    check_part: Callable[[dict[str, Any]], None],
    inputs: Inputs,
    written_in: str,
    title: str,
    translated: bool,
    user: User,
    deadline: Deadline,
    on_progress: Callable[[int, int], None],
) -> tuple[Accepted, str]:
    """The kind's data from one call per passage, as acceptance keeps it, and the model
    that wrote it. `written_in` says which language to write in;
    `check_part` weighs each part (its language), `check` (the kind's own: markers,
    options) the document assembled."""
    passages = [hit.chunk.text for hit in inputs.hits]
    numbers = spread(len(passages), piece.most)
    if piece.first is not None:
        piece = _decided(
            piece.first, inputs, numbers, written_in=written_in, user=user, deadline=deadline
        )
    total = Accepted(data={})
    parts: list[dict[str, Any]] = []
    model, lost = "", 0
    for done, number in enumerate(numbers):
        on_progress(done, len(numbers))
        written = _written_part(
            kind=kind,
            piece=piece,
            inputs=inputs,
            number=number,
            written_in=written_in,
            translated=translated,
            check_part=check_part,
            user=user,
            deadline=deadline,
        )
        if written is None:
            lost += 1
            continue
        part = written.data
        model = written.model
        parts.append(part.data)
        total.dropped += part.dropped
        total.claims += part.claims
        total.repeated += part.repeated
        total.problems += part.problems
    on_progress(len(numbers), len(numbers))
    if not any(_said(part) for part in parts):
        raise GenerationFailed(
            Text(
                "The chat model wrote nothing the passages support for this %(kind)s (%(count)s "
                "passages asked, one at a time).",
                kind=kind,
                count=len(numbers),
            )
        )
    data = piece.assemble(parts, title)
    # The same card or bullet from two passages is kept once (as within one reply).
    again = acceptance.accept(kind, data, passages, translated=True)
    total.data, total.repeated = again.data, total.repeated + again.repeated
    try:
        check(total.data, len(passages))
    except InvalidOutput as exc:
        raise GenerationFailed(
            Text("The %(kind)s assembled is not valid: %(error)s.", kind=kind, error=str(exc))
        ) from exc
    if lost:
        logger.info("%s: %s of %s passages gave nothing", kind, lost, len(numbers))
    return total, model


def _written_part(
    *,
    kind: str,
    piece: Piece,
    inputs: Inputs,
    number: int,
    written_in: str,
    translated: bool,
    check_part: Callable[[dict[str, Any]], None],
    user: User,
    deadline: Deadline,
) -> StructuredReply[Accepted] | None:
    """Passage `number`'s part of the document, as acceptance keeps it; None when its reply
    was invalid twice (the passage is left out, and logged)."""
    passages = [hit.chunk.text for hit in inputs.hits]
    # Support is weighed against this passage alone: the claims are cited to it.
    alone = [text if n == number else "" for n, text in enumerate(passages, start=1)]

    def take(reply: dict[str, Any]) -> Accepted:
        part = piece.part(reply, number)
        if not _said(part):  # nothing of the kind here (an infographic's figures)
            return Accepted(data=part)
        accepted = acceptance.accept(kind, part, alone, translated=translated)
        if not _said(accepted.data):
            raise InvalidOutput(
                "nothing in it is stated in the text given, so nothing of it was kept; "
                "write only what the text states",
                details=accepted.problems,
            )
        check_part(accepted.data)
        return accepted

    try:
        return generate_json(
            system=f"{piece.instructions}\n\n{written_in}",
            material=_material(inputs, number),
            schema=piece.schema,
            name=f"{kind} part",
            user=user,
            accept=take,
            passages=0,  # the model writes no markers here
            max_tokens=piece.max_tokens,
            deadline=deadline,
        )
    except GenerationFailed as exc:
        if deadline.remaining() <= 0:
            raise  # the document's time ran out, not this passage's luck
        logger.info("%s: passage %s left out: %s", kind, number, exc)
        return None
