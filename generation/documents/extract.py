"""What can honestly be made without a language model: the sources' own key sentences, and
the figures and dates their sentences state. Everything here quotes the passages it read
and keeps each quote's passage number, so extractive documents cite like the others."""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

from generation.documents.inputs import Inputs
from generation.extractive import split_sentences
from generation.summaries import _content_terms
from library.models import Source

MAX_SENTENCE_CHARS = 400

MONTHS = (
    "January|February|March|April|May|June|July|August|September|October|November|December|"
    "Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec|"
    "Januar|Februar|März|Mai|Juni|Juli|Oktober|Dezember"
)
DATE_RE = re.compile(
    rf"\b(?:\d{{1,2}}\.?\s(?:{MONTHS})\.?\s\d{{4}}"  # 12 March 2020, 12. März 2020
    rf"|(?:{MONTHS})\.?\s\d{{1,2}},?\s\d{{4}}"  # March 12, 2020
    rf"|(?:{MONTHS})\s\d{{4}}"  # March 2020
    r"|\d{4}-\d{2}-\d{2}"  # 2020-03-12
    r"|\d{1,2}\.\d{1,2}\.\d{4}"  # 12.03.2020
    r"|(?:1[5-9]|20)\d{2})\b"  # a year
)
UNITS = (
    r"%|‰|percent|per cent|Prozent|million|billion|trillion|thousand|Millionen|Milliarden|"
    r"Mio\.|Mrd\.|km|cm|mm|m|kg|mg|g|ml|l|°C|USD|EUR|€|\$|years?|months?|days?|hours?|minutes?|"
    r"Jahre|Jahren|Monate|Tage|Tagen|Stunden"
)
FIGURE_RE = re.compile(
    rf"(?:[$€£]\s?)?(?<![\w.,])\d{{1,3}}(?:[,\u202f\u00a0 ]\d{{3}})*(?:[.,]\d+)?"
    rf"(?:\s?(?:{UNITS})(?!\w))?"
)
YEAR_RE = re.compile(r"\b(1[5-9]\d{2}|20\d{2})\b")


def is_complete(sentence: str) -> bool:
    """A whole sentence: it starts like one (a capital or a digit) and ends with a stop."""
    body = sentence.lstrip("\"'“„([")
    return bool(body) and (body[0].isupper() or body[0].isdigit()) and bool(END_RE.search(body))


END_RE = re.compile(r"[.!?…][\"'”)\]]?$")
BLOCK_RE = re.compile(r"\n\s*\n")
HEADING_LINE_RE = re.compile(r"^\s{0,3}#{1,6}\s")


def _sentences(text: str) -> list[str]:
    """The sentences of a chunk, paragraph by paragraph, leaving out Markdown headings
    (which would otherwise run into the sentence after them)."""
    sentences: list[str] = []
    for block in BLOCK_RE.split(text):
        lines = [line for line in block.splitlines() if not HEADING_LINE_RE.match(line)]
        sentences += split_sentences("\n".join(lines))
    return sentences


@dataclass(frozen=True)
class Quote:
    text: str
    passage: int  # the [n] it came from
    source: Source


@dataclass(frozen=True)
class Finding:
    value: str  # the figure or date as written
    is_date: bool
    year: int | None
    quote: Quote


def source_sentences(inputs: Inputs, source: Source) -> list[Quote]:
    quotes: list[Quote] = []
    seen: set[str] = set()
    for number, hit in inputs.hits_of(source):
        for sentence in _sentences(hit.chunk.text):
            sentence = " ".join(sentence.split())[:MAX_SENTENCE_CHARS]
            # Overlapping chunks repeat sentences; a chunk cut mid-sentence starts or ends
            # with a fragment, and short ones say little alone.
            if sentence in seen or not is_complete(sentence):
                continue
            if len(_content_terms(sentence)) < 3:
                continue
            seen.add(sentence)
            quotes.append(Quote(text=sentence, passage=number, source=source))
    return quotes


def key_sentences(quotes: list[Quote], limit: int) -> list[Quote]:
    """The `limit` sentences that hold most of the words these sentences use most often,
    in their order (as generation/summaries.py picks a summary's sentences)."""
    terms = [_content_terms(quote.text) for quote in quotes]
    counts = Counter(term for sentence in terms for term in set(sentence))
    frequent = {term: count for term, count in counts.most_common(30) if count > 1}

    def score(index: int) -> float:
        found = sum(frequent.get(term, 0) for term in set(terms[index]))
        return found / math.sqrt(len(terms[index]) + 4)

    chosen = sorted(range(len(quotes)), key=lambda i: (-score(i), i))[:limit]
    return [quotes[index] for index in sorted(chosen)]


def findings(quotes: list[Quote]) -> list[Finding]:
    """Each date and each figure with a unit or of two digits or more, in the order met;
    a bare small number ("3 of them", a list item) says too little to tabulate."""
    found: list[Finding] = []
    seen: set[tuple[str, str]] = set()
    for quote in quotes:
        taken: list[tuple[int, int]] = []
        for match in DATE_RE.finditer(quote.text):
            value = match.group(0)
            taken.append(match.span())
            year = YEAR_RE.search(value)
            if (value, quote.text) not in seen:
                seen.add((value, quote.text))
                found.append(Finding(value, True, int(year.group(1)) if year else None, quote))
        for match in FIGURE_RE.finditer(quote.text):
            value = match.group(0).strip()
            if any(start <= match.start() < end for start, end in taken):
                continue  # part of a date
            digits = re.sub(r"\D", "", value)
            has_unit = value != re.sub(rf"\s?(?:{UNITS})$", "", value) or value[0] in "$€£"
            if not has_unit and len(digits) < 2:
                continue
            if (value, quote.text) not in seen:
                seen.add((value, quote.text))
                found.append(Finding(value, False, None, quote))
    return found


def around(text: str, value: str, words: int = 12) -> str:
    """A short stretch of `text` around `value`, for a label: about `words` words."""
    start = text.find(value)
    if start < 0:
        return " ".join(text.split()[:words])
    before = text[:start].split()[-(words // 2) :]
    after = text[start + len(value) :].split()[: words // 2]
    label = " ".join([*before, value, *after]).strip(" ,;:")
    prefix = "… " if len(before) < len(text[:start].split()) else ""
    suffix = " …" if len(after) < len(text[start + len(value) :].split()) else ""
    return prefix + label + suffix
