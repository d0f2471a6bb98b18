"""The key sentences of the passages a generator was given, for the offline kinds that work
from them (the audio script, the mind map's last resort). Each quote keeps its passage
number, so extractive documents cite like the others. The whole-source reading of the
other offline kinds is in reading.py, figures.py and definitions.py."""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

from generation.documents.inputs import Inputs
from language.words import content_terms, split_sentences
from library.models import Source

MAX_SENTENCE_CHARS = 400


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
            if len(content_terms(sentence)) < 3:
                continue
            seen.add(sentence)
            quotes.append(Quote(text=sentence, passage=number, source=source))
    return quotes


def key_sentences(quotes: list[Quote], limit: int) -> list[Quote]:
    """The `limit` sentences that hold most of the words these sentences use most often,
    in their order (as ingest/summaries.py picks a summary's sentences)."""
    terms = [content_terms(quote.text) for quote in quotes]
    counts = Counter(term for sentence in terms for term in set(sentence))
    frequent = {term: count for term, count in counts.most_common(30) if count > 1}

    def score(index: int) -> float:
        found = sum(frequent.get(term, 0) for term in set(terms[index]))
        return found / math.sqrt(len(terms[index]) + 4)

    chosen = sorted(range(len(quotes)), key=lambda i: (-score(i), i))[:limit]
    return [quotes[index] for index in sorted(chosen)]
