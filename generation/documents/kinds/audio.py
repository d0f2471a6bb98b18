"""An audio overview: a script spoken by generation/speech.py's synthesize_dialogue into an
MP3. Three formats: a deep dive (two hosts talk the sources through, the default), a brief
(one voice, about two minutes) and a debate (two hosts take sides); each short, default or
long. Two hosts alternate: never the same one twice in a row."""

from __future__ import annotations

import re
from typing import Any

from django.utils.translation import gettext as _

from generation.documents.pieces import COPIED_RE, ONE_PASSAGE, Piece, joined
from generation.documents.structured import InvalidOutput

FOCUS = "main findings, surprising facts and open questions worth discussing"

DEEP_DIVE, BRIEF, DEBATE = "deep_dive", "brief", "debate"
LENGTHS = ("short", "default", "long")
# Words the script runs to, by format and length: a voice says about 150 a minute, so a
# brief of default length takes about two minutes.
WORDS = {
    BRIEF: {"short": 150, "default": 300, "long": 450},
    DEEP_DIVE: {"short": 450, "default": 800, "long": 1300},
    DEBATE: {"short": 450, "default": 800, "long": 1300},
}
WORDS_PER_TURN = {BRIEF: 60, DEEP_DIVE: 55, DEBATE: 55}
# A token is about 1.3 words of English and more of German; a turn's JSON adds about 15.
TOKENS_PER_WORD = 1.6
TOKENS_PER_TURN = 15

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "minLength": 1, "maxLength": 200},
        "turns": {
            "type": "array",
            "minItems": 1,
            "maxItems": 60,
            "items": {
                "type": "object",
                "properties": {
                    "speaker": {"enum": ["A", "B"]},
                    "text": {"type": "string", "minLength": 1, "maxLength": 1500},
                },
                "required": ["speaker", "text"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["title", "turns"],
    "additionalProperties": False,
}

SPOKEN = """Use only facts from the material. The script is spoken aloud: no [n] markers, no \
Markdown, no stage directions, no lists; say numbers and names as a speaker would."""

FORMAT_INSTRUCTIONS = {
    DEEP_DIVE: """You write the script of an audio overview of the user's documents: two \
hosts, "A" and "B", talk through what the documents say, their main parts in order, in \
about {turns} turns of a few sentences each (about {words} words in all). The hosts take \
turns: A, B, A, B …, never the same host twice in a row. A opens by saying what the \
documents are; the last turn sums up.""",
    BRIEF: """You write the script of a brief audio summary of the user's documents, read \
by one voice, "A": about {words} words (about {minutes} minutes spoken) in {turns} short \
paragraphs, each a turn with the speaker "A". The main points only, in the documents' \
order; the first paragraph says what the documents are.""",
    DEBATE: """You write the script of a debate about the user's documents: two hosts take \
sides. "A" makes the case for what the documents propose or claim; "B" argues the other \
side: the limits, risks, costs and alternatives, as far as the documents give them. They \
take turns, A, B, A, B …, never the same host twice in a row, in about {turns} turns (about \
{words} words in all). Each argues only from facts in the material; the last turn says \
where they agree.""",
}


def turn_count(audio_format: str, length: str) -> int:
    return max(2, round(WORDS[audio_format][length] / WORDS_PER_TURN[audio_format]))


# The most a turn may hold, and the turns beyond those asked for: a small model that falls
# into a loop is stopped there by llama.cpp's grammar, and the script still fits max_tokens.
TURN_CHARS = 450
SPARE_TURNS = 2
CHARS_PER_TOKEN = 3.2


def schema(audio_format: str, length: str) -> dict[str, Any]:
    """The script's schema for a format and length: its turns bounded, one speaker for a
    brief."""
    turn = SCHEMA["properties"]["turns"]["items"]
    properties = {
        **turn["properties"],
        "text": {"type": "string", "minLength": 1, "maxLength": TURN_CHARS},
    }
    if audio_format == BRIEF:
        properties["speaker"] = {"enum": ["A"]}
    turns = {
        **SCHEMA["properties"]["turns"],
        "maxItems": turn_count(audio_format, length) + SPARE_TURNS,
        "items": {**turn, "properties": properties},
    }
    return {**SCHEMA, "properties": {**SCHEMA["properties"], "turns": turns}}


def instructions(audio_format: str, length: str) -> str:
    words = WORDS[audio_format][length]
    described = FORMAT_INSTRUCTIONS[audio_format].format(
        turns=turn_count(audio_format, length), words=words, minutes=round(words / 150)
    )
    return f"{described}\n\n{SPOKEN}"


def output_tokens(audio_format: str, length: str) -> int:
    """max_tokens for the script: its words and the turns' JSON, with a fifth to spare, and
    at least what the schema's bounds let it run to."""
    words = WORDS[audio_format][length]
    turns = turn_count(audio_format, length)
    tokens = words * TOKENS_PER_WORD + turns * TOKENS_PER_TURN + 100
    bounded = (turns + SPARE_TURNS) * (TURN_CHARS / CHARS_PER_TOKEN + TOKENS_PER_TURN) + 100
    return round(max(tokens * 1.2, bounded))


INSTRUCTIONS = instructions(DEEP_DIVE, "default")


def check(data: dict[str, Any], passages: int) -> None:
    return None  # the schema says it all: a spoken script cites nothing


def merge_turns(data: dict[str, Any]) -> dict[str, Any]:
    """An audio script whose host speaks twice in a row, spoken as one turn."""
    turns: list[dict[str, Any]] = []
    for turn in data["turns"]:
        if turns and turns[-1]["speaker"] == turn["speaker"]:
            turns[-1] = {**turns[-1], "text": f"{turns[-1]['text']} {turn['text']}"}
        else:
            turns.append(dict(turn))
    return {**data, "turns": turns}


def readable(data: dict[str, Any]) -> str:
    lines = [f"# {data['title']}", ""]
    lines += [f"{turn['speaker']}: {turn['text']}" for turn in data["turns"]]
    return "\n\n".join(lines)


# A passage at a time (generation/documents/by_passage.py): what each format asks of one
# passage; Loupe gives the lines to the hosts in turn and opens and closes the script.
PIECE_TURNS = {
    DEEP_DIVE: (
        "A",
        "the first host's question about this part's subject, one sentence ending with ?",
        "B",
        "the second host's answer: explains what it says, its facts, names and figures",
    ),
    DEBATE: (
        "A",
        "the first host argues for what this part proposes or claims, from its facts",
        "B",
        "the second host argues the other side: its limits, risks, costs or alternatives, "
        "as far as the text gives them",
    ),
    BRIEF: ("A", "one short paragraph that says what this part says, its main point first"),
}


def by_passage(audio_format: str, length: str) -> Piece:
    """The lines a format asks of one passage: a host's line and the other's reply (a brief:
    one paragraph); as many passages as the length's turns take."""
    spoken = PIECE_TURNS[audio_format]
    speakers, described = spoken[0::2], spoken[1::2]
    fields = [f"line_{speaker.lower()}" for speaker in speakers]
    listed = "\n".join(
        f'- "{field}": {what}, one to three sentences.'
        for field, what in zip(fields, described, strict=True)
    )
    per_passage = len(speakers)
    return Piece(
        schema={
            "type": "object",
            "properties": {
                field: {"type": "string", "minLength": 1, "maxLength": TURN_CHARS}
                for field in fields
            },
            "required": fields,
            "additionalProperties": False,
        },
        instructions=f"""You write part of the script of a spoken audio overview from one \
part of the user's documents.

{listed}

{SPOKEN}
{ONE_PASSAGE}""",
        max_tokens=round(per_passage * (TURN_CHARS / CHARS_PER_TOKEN + TOKENS_PER_TURN) + 60),
        part=lambda reply, number: {
            "turns": [
                {"speaker": speaker, "text": _spoken(reply[field])}
                for speaker, field in zip(speakers, fields, strict=True)
            ]
        },
        assemble=lambda parts, title: {"title": title, "turns": _framed(parts, title, speakers)},
        title=lambda notebook: notebook,
        most=max(1, round(turn_count(audio_format, length) / per_passage)),
    )


UP_TO_LAST_SENTENCE_RE = re.compile(r".*[.!?…](?=\s|$)", re.DOTALL)


def _spoken(line: str) -> str:
    """A line as it is said, up to its last finished sentence when it ran to TURN_CHARS (a
    voice must not stop mid-word); InvalidOutput for one copied from the page, or cut off
    in its first sentence."""
    stopped = len(line) >= TURN_CHARS
    line = line.strip()
    if stopped:
        ended = UP_TO_LAST_SENTENCE_RE.match(line)
        if ended is None:
            raise InvalidOutput("a line is cut off; say it in a few shorter sentences")
        line = ended.group(0)
    if COPIED_RE.search(line):
        raise InvalidOutput(
            "a line is copied from the page (a list, a table or where the text stands); say "
            "it in whole spoken sentences of your own"
        )
    return line


def _framed(parts: list[dict[str, Any]], title: str, speakers: tuple[str, ...]) -> list[Any]:
    """The passages' lines, opened and closed by the first host (a two-host script keeps
    its turns alternating: each passage's lines begin with A and end with B)."""
    last = speakers[-1]
    opening = {
        "speaker": "A",
        "text": _("Welcome. Today we talk about %(title)s.") % {"title": title},
    }
    closing = {"speaker": "A" if last == "B" else last, "text": _("That is all for today.")}
    turns = joined(parts, "turns")
    if len(speakers) > 1:
        # A opens, then each passage's A and B lines: the welcome joins the first A line.
        turns[0] = {**turns[0], "text": f"{opening['text']} {turns[0]['text']}"}
        return [*turns, closing]
    return [opening, *turns, closing]
