"""An audio overview: a script spoken by generation/speech.py's synthesize_dialogue into an
MP3. Three formats: a deep dive (two hosts talk the sources through, the default), a brief
(one voice, about two minutes) and a debate (two hosts take sides); each short, default or
long. Two hosts alternate: never the same one twice in a row."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext as _

from generation.documents.extract import Quote, _sentences, is_complete, key_sentences
from generation.documents.inputs import Inputs
from generation.documents.kinds.mindmap import _short as section_label
from ingest.structure import strip_number
from library.models import Chunk, Source
from library.words import content_terms

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
# Offline: a manual's sentence runs to about this many words; a part says at most this many.
SENTENCE_WORDS = 24
MAX_SENTENCES = 5

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

# Words that mark a sentence as a caution or a limit: the other side of a debate offline.
CAVEAT_RE = re.compile(
    r"\b(?:however|but|not|never|avoid|risks?|warning|caution|careful|unless|although|"
    r"cannot|can't|don't|beware|danger\w*|problems?|limit\w*|aber|jedoch|nicht|nie|niemals|"
    r"vermeiden|Risik\w*|Warnung|Vorsicht|sofern|obwohl|allerdings|Gefahr\w*|Problem\w*)\b",
    re.IGNORECASE,
)
# What reads badly aloud: paths, commands, addresses, markup.
UNSPEAKABLE_RE = re.compile(r"[/\\$={}<>|_#@`~^*]|\w\.\w+\(")


def turn_count(audio_format: str, length: str) -> int:
    return max(2, round(WORDS[audio_format][length] / WORDS_PER_TURN[audio_format]))


def schema(audio_format: str, length: str) -> dict[str, Any]:
    """The script's schema for a format: one speaker for a brief."""
    if audio_format != BRIEF:
        return SCHEMA
    turn = SCHEMA["properties"]["turns"]["items"]
    one_voice = {**turn, "properties": {**turn["properties"], "speaker": {"enum": ["A"]}}}
    turns = {**SCHEMA["properties"]["turns"], "items": one_voice}
    return {**SCHEMA, "properties": {**SCHEMA["properties"], "turns": turns}}


def instructions(audio_format: str, length: str) -> str:
    words = WORDS[audio_format][length]
    described = FORMAT_INSTRUCTIONS[audio_format].format(
        turns=turn_count(audio_format, length), words=words, minutes=round(words / 150)
    )
    return f"{described}\n\n{SPOKEN}"


def output_tokens(audio_format: str, length: str) -> int:
    """max_tokens for the script: its words and the turns' JSON, with a fifth to spare."""
    words = WORDS[audio_format][length]
    tokens = words * TOKENS_PER_WORD + turn_count(audio_format, length) * TOKENS_PER_TURN + 100
    return round(tokens * 1.2)


INSTRUCTIONS = instructions(DEEP_DIVE, "default")


def check(data: dict[str, Any], passages: int) -> None:
    return None  # the schema says it all: a spoken script cites nothing


# Offline: the sources' main sections, walked through in their own sentences --------------


@dataclass(frozen=True)
class Section:
    source: Source
    label: str
    order: int
    sentences: list[str]  # its key sentences, best first kept in reading order
    caveats: list[str]  # its sentences that name a limit or a risk
    size: int  # its chunks


# A cross-reference or a caption says nothing heard alone ("see Section 9.1.2", "Table 3.1:").
CROSS_REFERENCE_RE = re.compile(
    r"\b(?:Section|Chapter|Table|Figure|Abschnitt|Kapitel|Tabelle|Abbildung)\s+\d", re.IGNORECASE
)
# A sentence the splitter cut at an abbreviation ("… wie z.B.") is no sentence.
CUT_AT_ABBREVIATION_RE = re.compile(r"\b(?:z\.\s?B|e\.g|i\.e|u\.a|bzw|usw|etc|vgl|ca)\.$")
# A PDF's run-in heading glued to the sentence after it: "Chapter 11", "Note", "Tip".
RUN_IN_RE = re.compile(
    r"^(?:(?:Chapter|Kapitel)\s+\d+\s+"
    r"|(?:Note|Tip|Caution|Warning|Important|Anmerkung|Hinweis|Tipp|Achtung|Warnung|Wichtig)"
    r"\s+(?=[A-ZÄÖÜ]))"
)


def _speakable(sentence: str) -> bool:
    return (
        not UNSPEAKABLE_RE.search(sentence)
        and not CROSS_REFERENCE_RE.search(sentence)
        and not CUT_AT_ABBREVIATION_RE.search(sentence)
        and len(sentence.split()) <= 45
    )


def _without_heading(sentence: str, headings: list[str]) -> str:
    """`sentence` without a heading the PDF's text ran into it ("1.5 The simple shell
    command Now you have …"): the section titles its chunks carry, and run-in labels."""
    sentence = RUN_IN_RE.sub("", sentence)
    for heading in headings:
        for form in (heading, strip_number(heading)):
            if form and sentence.startswith(form + " "):
                sentence = RUN_IN_RE.sub("", sentence[len(form) + 1 :])
    return sentence


def _section_texts(source: Source) -> list[tuple[str, list[str], list[str]]]:
    """The source's main sections in reading order with their chunks' texts: its chapters,
    or the sections of its one chapter (a document's title over everything); one section
    named by the source's title when it has no structure."""
    chunks = list(
        Chunk.objects.filter(source=source).order_by("ordinal").values_list("section", "text")
    )
    if not any(path for path, _text in chunks):
        return [(source.title, [text for _path, text in chunks], [])]
    tops = {path[0] for path, _text in chunks if path}
    depth = 1 if len(tops) > 1 else 2
    sections: dict[str, tuple[list[str], list[str]]] = {}
    for path, text in chunks:
        if path:  # text before the first heading (a title page, a preface) is no part
            texts, headings = sections.setdefault(path[min(depth, len(path)) - 1], ([], []))
            texts.append(text)
            headings += [heading for heading in path if heading not in headings]
    # Longest first: "1.5 The simple shell command" before "1.5 The simple shell".
    return [
        (label, texts, sorted(headings, key=len, reverse=True))
        for label, (texts, headings) in sections.items()
    ]


def sections_of(
    source: Source, parts: list[tuple[str, list[str], list[str]]], *, sentences: int
) -> list[Section]:
    """The source's `parts` (_section_texts) with their `sentences` key sentences."""
    found = []
    for order, (label, texts, headings) in enumerate(parts):
        seen: set[str] = set()
        quotes = []
        for text in texts:
            for sentence in _sentences(text):
                sentence = _without_heading(" ".join(sentence.split()), headings)
                if sentence in seen or not is_complete(sentence) or not _speakable(sentence):
                    continue
                if len(content_terms(sentence)) < 4:
                    continue
                seen.add(sentence)
                quotes.append(Quote(text=sentence, passage=0, source=source))
        if not quotes:
            continue
        chosen = [quote.text for quote in key_sentences(quotes, sentences)]
        caveats = [
            quote.text
            for quote in key_sentences(
                [quote for quote in quotes if CAVEAT_RE.search(quote.text)], 2
            )
            if quote.text not in chosen
        ]
        found.append(Section(source, section_label(label), order, chosen, caveats, size=len(texts)))
    return found


def _words(text: str) -> int:
    return len(text.split())


def extractive(
    inputs: Inputs, *, notebook_title: str, audio_format: str = DEEP_DIVE, length: str = "default"
) -> dict[str, Any]:
    """The script from the sources' own sentences, section by section in reading order,
    the largest sections first chosen until the format's length is reached."""
    target = WORDS[audio_format][length]
    parts = {source.pk: _section_texts(source) for source in inputs.sources}
    # A longer script says more of each part when the parts run out before its length.
    count = sum(len(each) for each in parts.values())
    per_section = 1
    if audio_format != BRIEF:
        per_section = max(2, min(MAX_SENTENCES, round(target / (count * SENTENCE_WORDS))))
    sections = [
        section
        for source in inputs.sources
        for section in sections_of(source, parts[source.pk], sentences=per_section)
    ]
    if audio_format == DEBATE and sum(1 for section in sections if section.caveats) >= 2:
        sections = [section for section in sections if section.caveats]
    chosen: list[Section] = []
    words = 0
    for section in sorted(sections, key=lambda section: -section.size):
        if words >= target:
            break
        chosen.append(section)
        words += sum(_words(sentence) for sentence in section.sentences) + 12
    order = {source.pk: index for index, source in enumerate(inputs.sources)}
    chosen.sort(key=lambda section: (order[section.source.pk], section.order))
    lines = _script(chosen, audio_format, notebook_title, several=len(inputs.sources) > 1)
    speakers = ["A"] if audio_format == BRIEF else ["A", "B"]
    return {
        "title": _title(audio_format) % {"notebook": notebook_title},
        "turns": [
            {"speaker": speakers[index % len(speakers)], "text": text}
            for index, text in enumerate(lines)
        ],
    }


def _title(audio_format: str) -> str:
    if audio_format == BRIEF:
        return _("Audio brief: %(notebook)s")
    if audio_format == DEBATE:
        return _("Audio debate: %(notebook)s")
    return _("Audio overview: %(notebook)s")


def _named(labels: list[str]) -> str:
    shown = [_("“%(part)s”") % {"part": label} for label in labels[:5]]
    if len(labels) > 5:
        shown.append(_("more"))
    return ", ".join(shown)


def _script(
    sections: list[Section], audio_format: str, notebook: str, *, several: bool
) -> list[str]:
    """The lines in order; the caller gives them to the hosts in turn."""
    labels = [section.label for section in sections]
    named = {"notebook": notebook, "parts": _named(labels), "count": len(labels)}
    if audio_format == BRIEF:
        lines = [
            _("A brief summary of %(notebook)s, in its sources' own words: %(parts)s.") % named
        ]
    elif audio_format == DEBATE:
        lines = [
            _("Welcome to a debate on %(notebook)s. I make the case its sources make.") % named,
            _(
                "And I answer with the limits and risks they name themselves. We take "
                "%(parts)s in turn."
            )
            % named,
        ]
    else:
        lines = [
            _("Welcome to this overview of %(notebook)s, told in its sources' own sentences.")
            % named,
            _("We walk through %(count)s of its main parts: %(parts)s.") % named,
        ]
    leads = [
        _("Let's turn to “%(section)s”. %(sentence)s"),
        _("Next: “%(section)s”. %(sentence)s"),
        _("Then there is “%(section)s”. %(sentence)s"),
    ]
    follows = [
        _("It also says: %(sentence)s"),
        _("And: %(sentence)s"),
        _("What stands out there: %(sentence)s"),
    ]
    previous_source = None
    for index, section in enumerate(sections):
        first, *rest = section.sentences
        if several and section.source != previous_source:
            lead = _("From “%(source)s”, its part “%(section)s”. %(sentence)s")
        else:
            lead = leads[index % len(leads)]
        previous_source = section.source
        lines.append(
            lead % {"source": section.source.title, "section": section.label, "sentence": first}
        )
        if audio_format == BRIEF:
            continue
        if audio_format == DEBATE and section.caveats:
            lines.append(
                _("But the source also says: %(sentence)s") % {"sentence": section.caveats[0]}
            )
        elif rest:
            lines.append(follows[index % len(follows)] % {"sentence": " ".join(rest)})
        else:
            lines.append(_("That is the gist of “%(section)s”.") % {"section": section.label})
    lines.append(
        _("That was %(notebook)s: %(parts)s. Thank you for listening.")
        % {"notebook": notebook, "parts": _named(labels)}
    )
    return lines


def readable(data: dict[str, Any]) -> str:
    lines = [f"# {data['title']}", ""]
    lines += [f"{turn['speaker']}: {turn['text']}" for turn in data["turns"]]
    return "\n\n".join(lines)
