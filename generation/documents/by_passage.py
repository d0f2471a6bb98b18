"""A document written a passage at a time (GENERATION_BY_PASSAGE; on for the local model).

A 1.5B model asked for a whole report, quiz or deck from eight passages copies them or
invents (docs/decisions.md). Asked about one passage at a time, with a short schema, it
writes what that passage says. Loupe cites the passage after each claim, keeps only the
claims the passage supports (acceptance.py), and assembles the kind's document in code.

A passage whose reply is invalid twice, or unsupported, is left out and counted, and the
spare passage read beside it (`spared`) is asked in its place, once; the document fails
only when no passage gave anything."""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User

from generation.documents import acceptance
from generation.documents.acceptance import Accepted
from generation.documents.deadline import Deadline
from generation.documents.inputs import GenerationFailed, Inputs, passage_place
from generation.documents.models import kind_name
from generation.documents.pieces import Piece
from generation.documents.structured import InvalidOutput, StructuredReply, generate_json
from language.words import CJK_RE
from texts import Text

logger = logging.getLogger(__name__)


# A document written a passage at a time reads this share more passages than it asks, spread
# between those it asks: a spare takes the place of a passage beside it that gave nothing (a
# page of names the model could only copy), so the document keeps its length. Without them
# a deep-dive audio of 8 passages came out of 3 (81 s).
SPARE_SHARE = 0.5


def spared(asked: int) -> int:
    """How many passages to read for `asked` to be asked, spares included."""
    return asked + math.ceil(asked * SPARE_SHARE)


def spread(count: int, most: int) -> list[int]:
    """The numbers (1-based) of at most `most` of `count` passages, evenly spaced from the
    first to the last (0: all of them)."""
    if not most or count <= most:
        return list(range(1, count + 1))
    return sorted({1 + round(index * (count - 1) / (most - 1)) for index in range(most)})


def asked_of(count: int, most: int) -> list[int]:
    """The numbers of the passages asked of `count` read: GENERATION_PASSAGES of them, or
    the kind's `most` where it asks fewer, spread evenly; the others are spares."""
    limit = min(most, settings.GENERATION_PASSAGES) if most else settings.GENERATION_PASSAGES
    return spread(count, limit)


def _said(data: Any) -> bool:
    """Whether `data` holds any text."""
    if isinstance(data, str):
        return bool(data.strip())
    if isinstance(data, dict):
        return any(_said(value) for value in data.values())
    if isinstance(data, list):
        return any(_said(value) for value in data)
    return False


# The fields that name a part's topic: a slide's or section's heading, a mind map's
# label, a flashcard's front.
NAMING_FIELDS = ("heading", "label", "front")


def _headings(data: Any) -> list[str]:
    """The names in a part (NAMING_FIELDS, a report section's "## " line)."""
    if isinstance(data, dict):
        found = [data[key] for key in NAMING_FIELDS if isinstance(data.get(key), str)]
        if isinstance(data.get("markdown"), str):
            found += [
                line.lstrip("#").strip()
                for line in data["markdown"].splitlines()
                if line.startswith("#")
            ]
        return found + [h for value in data.values() for h in _headings(value)]
    if isinstance(data, list):
        return [heading for value in data for heading in _headings(value)]
    return []


def _flat(text: str) -> str:
    return " ".join(text.lower().split())


COPIED_RUN = 3  # words of a heading that, found together in the passage, were copied


def _check_translated_headings(data: dict[str, Any], material: str, written_in: str) -> None:
    """InvalidOutput for a heading (or label, or card front) copied from a passage in
    another language, whole or three words of it together: the 1.5B model, asked for
    German, writes German sentences under the section's English title ("Debian Reference -
    Reminders for New Users"), and a few words are too few for the language check."""
    text = _flat(material)
    for heading in _headings(data):
        words = _flat(NUMBERING_RE.sub("", heading)).split()
        runs = [words] if len(words) == 2 else []
        runs += [words[i : i + COPIED_RUN] for i in range(len(words) - COPIED_RUN + 1)]
        if any(f" {' '.join(run)} " in f" {text} " for run in runs):
            raise InvalidOutput(
                f"the heading {heading!r} is copied from the text; translate it. {written_in}"
            )


# A section number before a heading ("7.5.1 Basic fonts").
NUMBERING_RE = re.compile(r"^\s*(?:\d+(?:\.\d+)*\.?|[A-Z]\.\d+(?:\.\d+)*)\s+")


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
    numbers = asked_of(len(passages), piece.most)
    spares = [number for number in range(1, len(passages) + 1) if number not in numbers]
    total = Accepted(data={})
    parts: list[tuple[int, dict[str, Any]]] = []
    model, lost = "", 0
    for done, number in enumerate(numbers):
        on_progress(done, len(numbers))
        asked = [number]
        if spares:  # the spare nearest to it, should this one give nothing
            asked.append(min(spares, key=lambda spare: (abs(spare - number), spare)))
        for candidate in asked:
            if candidate in spares:
                spares.remove(candidate)
            written = _written_part(
                kind=kind,
                piece=piece,
                inputs=inputs,
                number=candidate,
                written_in=written_in,
                translated=translated,
                check_part=check_part,
                user=user,
                deadline=deadline,
            )
            if written is not None:
                break
            lost += 1
        if written is None:
            continue
        part = written.data
        model = written.model
        parts.append((candidate, part.data))
        total.dropped += part.dropped
        total.claims += part.claims
        total.repeated += part.repeated
        total.problems += part.problems
    on_progress(len(numbers), len(numbers))
    parts.sort(key=lambda numbered: numbered[0])  # a spare's part where it stands
    if not any(_said(part) for _, part in parts):
        raise GenerationFailed(
            Text(
                "The chat model wrote nothing the passages support for this %(kind)s (%(count)s "
                "passages asked, one at a time).",
                kind=kind_name(kind),
                count=len(numbers),
            )
        )
    data = piece.assemble([part for _, part in parts], title)
    # The same card or bullet from two passages is kept once (as within one reply).
    again = acceptance.accept(kind, data, passages, translated=True)
    total.data, total.repeated = again.data, total.repeated + again.repeated
    try:
        check(total.data, len(passages))
    except InvalidOutput as exc:
        raise GenerationFailed(
            Text(
                "The %(kind)s assembled is not valid: %(error)s.",
                kind=kind_name(kind),
                error=str(exc),
            )
        ) from exc
    if lost:
        logger.info("%s: %s of the passages asked gave nothing", kind, lost)
    return total, model


def _check_script(reply: dict[str, Any], passage: str) -> None:
    """InvalidOutput when the reply holds characters of a script its passage does not."""
    written = CJK_RE.findall(json.dumps(reply, ensure_ascii=False))
    slipped = "".join(dict.fromkeys(char for char in written if char not in passage))
    if slipped:
        raise InvalidOutput(
            f"it slips into another script ({slipped}); write every word in "
            "the language you were asked to write in"
        )


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
        _check_script(reply, alone[number - 1])
        if piece.own_words is not None:
            reply = piece.own_words(reply, alone[number - 1])
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
        if translated:
            _check_translated_headings(accepted.data, _material(inputs, number), written_in)
        return accepted

    try:
        return generate_json(
            system=f"{piece.instructions}\n\n{written_in}",
            material=_material(inputs, number),
            schema=piece.schema,
            name=f"{kind} part",
            what=kind_name(kind),
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
