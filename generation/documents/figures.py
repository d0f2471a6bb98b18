"""Real figures and dated events in a source's sentences, for tables and infographics made
offline: a quantity with its unit, a percentage, a sum of money, a count of things, a date.
Never a section number, a version, a time of day, a number inside a command, path or web
address, nor a year that only names something ("Debian 11", "ISO 8601")."""

from __future__ import annotations

import re
from dataclasses import dataclass

from generation.documents.reading import Sentence, read_sentences, source_chunks
from library.models import Source
from library.sentences import is_prose, is_whole

MIN_WORDS, MAX_WORDS = 5, 60
# Fewer things than this counted are no figure worth a row ("2 types", "4 examples").
MIN_COUNT = 10
CONTEXT_WORDS = 18

UNITS = (
    r"%|‰|percent|per cent|Prozent|million|billion|trillion|thousand|Millionen|Milliarden|"
    r"Mio\.|Mrd\.|[KMGTP]i?B|kB|bytes?|Bytes?|bits?|Bit|[kMG]?Hz|ms|seconds?|Sekunden?|"
    r"minutes?|Minuten?|hours?|Stunden?|days?|Tagen?|Tage|weeks?|Wochen?|months?|Monaten?|"
    r"Monate|years?|Jahren?|Jahre|characters?|Zeichen|km|cm|mm|m|kg|mg|g|ml|l|°C|°F|dpi|"
    r"pixels?|Pixel|USD|EUR|dollars?|euros?|Dollar|Euro|Paketen?|Dateien|Zeilen|Seiten|"
    r"Benutzern?|Einträgen?"
)
CURRENCY = "$€£"
NUMBER = r"\d{1,3}(?:[,\u202f\u00a0]\d{3})+(?:\.\d+)?|\d+(?:[.,]\d+)?"
QUALIFIER = (
    r"(?:(?:less|more|fewer) than|about|around|over|under|up to|at least|at most|nearly|almost|"
    r"approximately|mehr als|weniger als|etwa|ungefähr|circa|ca\.|bis zu|mindestens|höchstens|"
    r"über|unter|rund)\s+"
)
# A number, maybe a range ("6 to 8"), then a unit, or a plural noun that says what is
# counted ("68980 packages", "200 nests"); a currency sign before counts as a unit.
FIGURE_RE = re.compile(
    rf"(?<![\w.,/\\:#@-])(?:{QUALIFIER})?(?P<money>[{CURRENCY}]\s?)?(?P<number>{NUMBER})"
    rf"(?:\s?(?:-|–|to|bis)\s?(?:{NUMBER}))?"
    rf"(?:\s?(?P<unit>{UNITS})(?![\w-])|\s(?P<counted>[a-z]{{3,}}s)\b)?"
)
# A number named by the word before it is a name, not a quantity: "Section 1.2",
# "Debian 11", "ISO 8601", "Table 3", "port 22", "version 2".
NAMING_WORD_RE = re.compile(
    r"(?:Section|Chapter|Table|Figure|Part|Appendix|Page|Version|Release|Step|Abschnitt|Kapitel|"
    r"Tabelle|Abbildung|Teil|Anhang|Seite|Schritt|version|release|page|step|item|port|"
    r"Port|No\.|Nr\.|[A-Z][A-Za-z]*[A-Z][A-Za-z]*|[A-Z][a-z]+)\s*$"
)
TECHNICAL_NEXT = set("$=/\\:_")
COUNTED_NOT_THINGS = {"times", "this", "thus", "has", "was", "is", "its", "as", "us", "yes"}

MONTHS = (
    "January|February|March|April|May|June|July|August|September|October|November|December|"
    "Jan\\.|Feb\\.|Mar\\.|Apr\\.|Jun\\.|Jul\\.|Aug\\.|Sep\\.|Sept\\.|Oct\\.|Nov\\.|Dec\\.|"
    "Januar|Februar|März|Mai|Juni|Juli|Oktober|Dezember"
)
YEAR = r"(?:1[5-9]|20)\d{2}"
# A year is a date when a word places something in time ("in 2016", "since 1993",
# "(released in 2015)", "Ende 2006"), or in a full date.
FULL_DATE_RE = re.compile(
    rf"(?<![\w/.-])(?P<date>\d{{1,2}}\.?\s(?:{MONTHS})\s{YEAR}"
    rf"|(?:{MONTHS})\s\d{{1,2}},?\s{YEAR}"
    rf"|(?:{MONTHS})\s{YEAR}"
    rf"|{YEAR}-\d{{2}}-\d{{2}}"
    rf"|\d{{1,2}}\.\d{{1,2}}\.{YEAR})(?![\w/-]|\.\d)"
)
PLACED_YEAR_RE = re.compile(
    r"(?:\b(?:in|since|until|by|from|between|and|as of|before|after|around|early|late|mid|"
    r"im|seit|bis|ab|vor|nach|anfang|ende|mitte|zwischen|und)\s|\((?:released in\s)?)"
    rf"(?P<date>{YEAR})(?![\w/-]|\.\d)",
    re.IGNORECASE,
)


def _dates(text: str) -> list[re.Match[str]]:
    full = list(FULL_DATE_RE.finditer(text))
    taken = [match.span("date") for match in full]
    placed = [
        match
        for match in PLACED_YEAR_RE.finditer(text)
        if not any(start <= match.start("date") < end for start, end in taken)
    ]
    return sorted(full + placed, key=lambda match: match.start("date"))


YEAR_RE = re.compile(rf"\b({YEAR})\b")


# A sentence whose subject is a pronoun ("It was downloaded on …") leaves its figure about
# nothing the reader can see.
PRONOUN_START_RE = re.compile(
    r"^(?:It|This|These|That|Those|They|Such|He|She|Es|Dies|Diese|Dieser|Dieses|Er)\b"
)


def clipped(text: str, max_chars: int) -> str:
    """`text` within `max_chars`, cut at a word."""
    if len(text) <= max_chars:
        return text
    return text[: max_chars - 2].rsplit(" ", 1)[0].rstrip(" ,;:") + " …"


@dataclass(frozen=True)
class Figure:
    value: str  # as written: "68980 packages", "less than 2%", "95 cm"
    sentence: Sentence

    @property
    def context(self) -> str:
        return context_of(self.sentence.text, self.value)


@dataclass(frozen=True)
class Event:
    date: str  # as written: "2015", "April 2021", "2023-02-02"
    year: int
    sentence: Sentence

    @property
    def value(self) -> str:
        return self.date

    @property
    def context(self) -> str:
        return context_of(self.sentence.text, self.date)


def _readable(sentence: Sentence) -> bool:
    """Whole prose that says what its figure is about without the sentence before it."""
    words = len(sentence.text.split())
    return (
        MIN_WORDS <= words <= MAX_WORDS
        and is_whole(sentence.text)
        and is_prose(sentence.text, sentence.language)
        and not PRONOUN_START_RE.match(sentence.text)
    )


def figures_of(sentence: Sentence) -> list[Figure]:
    if not _readable(sentence):
        return []
    dates = [match.span("date") for match in _dates(sentence.text)]
    found = []
    for match in FIGURE_RE.finditer(sentence.text):
        if not (match.group("unit") or match.group("money") or match.group("counted")):
            continue  # a bare number says nothing of what it counts
        if any(start <= match.start("number") < end for start, end in dates):
            continue
        counted = match.group("counted")
        if counted and (
            counted.lower() in COUNTED_NOT_THINGS
            or float(re.sub(r"[^\d.]", "", match.group("number").replace(",", "")) or 0) < MIN_COUNT
        ):
            continue
        if sentence.text[match.end() : match.end() + 1] in TECHNICAL_NEXT:
            continue  # part of a command or an expression: "$1$", "1GB=…"
        if NAMING_WORD_RE.search(sentence.text[: match.start()]):
            continue
        found.append(Figure(value=match.group(0).strip(), sentence=sentence))
    return found


def events_of(sentence: Sentence) -> list[Event]:
    if not _readable(sentence):
        return []
    found = []
    for match in _dates(sentence.text):
        year = YEAR_RE.search(match.group("date"))
        if year:
            found.append(
                Event(date=match.group("date"), year=int(year.group(1)), sentence=sentence)
            )
    return found


def context_of(text: str, value: str, words: int = CONTEXT_WORDS) -> str:
    """What the sentence says about `value`: the sentence itself when short, else about
    `words` words around the value, as written."""
    spans = [match.span() for match in re.finditer(r"\S+", text)]
    if len(spans) <= words:
        return text
    start = text.find(value)
    at = next((i for i, (_s, end) in enumerate(spans) if end > start), 0) if start >= 0 else 0
    first = max(0, min(at - words // 2, len(spans) - words))
    last = first + words - 1
    label = text[spans[first][0] : spans[last][1]].strip(" ,;:")
    return ("… " if first else "") + label + (" …" if last < len(spans) - 1 else "")


def source_figures(source: Source) -> list[Figure | Event]:
    """The source's figures and dated events in reading order, each value once (the first
    sentence that states it)."""
    found: list[Figure | Event] = []
    seen: set[str] = set()
    for sentence in read_sentences(source_chunks(source)):
        stated: list[Figure | Event] = [*figures_of(sentence), *events_of(sentence)]
        for item in stated:
            key = " ".join(item.value.casefold().split())
            if key not in seen:
                seen.add(key)
                found.append(item)
    return found


def weight(figure: Figure) -> int:
    """How much a figure says alone: a share or a sum most, a measured quantity next, a
    count of things least."""
    if re.search(rf"%|‰|percent|Prozent|[{CURRENCY}]|USD|EUR|dollar|euro", figure.value, re.I):
        return 0
    match = FIGURE_RE.search(figure.value)
    return 2 if match and match.group("counted") else 1
