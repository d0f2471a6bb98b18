"""A source read whole, as a person reads it, for the offline documents: its chunks' sentences
in reading order with their sections (rebuilt into paragraphs and judged by
language/sentences.py), its major parts, and the sentences central to each."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

from generation.documents.inputs import Inputs
from ingest.structure import strip_number
from language.sentences import line_width, paragraphs
from language.words import content_terms, split_sentences
from library.models import Chunk, Source
from retrieval.search import Hit


@dataclass(frozen=True)
class Sentence:
    text: str
    chunk: Chunk
    section: tuple[str, ...]  # its headings, outermost first, without their numbers

    @property
    def language(self) -> str:
        return self.chunk.source.language or ""


def source_chunks(source: Source) -> list[Chunk]:
    """The source's chunks in reading order (without their vectors)."""
    chunks = list(
        Chunk.objects.filter(source=source).defer("embedding", "search_vector").order_by("ordinal")
    )
    for chunk in chunks:
        chunk.source = source  # cited by title: no query per chunk
    return chunks


def cite(inputs: Inputs, chunk: Chunk) -> str:
    """The [n] of `chunk`, made a passage of the document when it is not one yet: an offline
    document reads the whole of each source, not only the passages its focus query found."""
    for number, hit in enumerate(inputs.hits, start=1):
        if hit.chunk.pk == chunk.pk:
            return f"[{number}]"
    # Not found by the search, so it has no similarity to the focus query to show.
    inputs.hits.append(Hit(chunk=chunk, similarity=0.0))
    return f"[{len(inputs.hits)}]"


def read_sentences(chunks: list[Chunk]) -> list[Sentence]:
    """Every whole sentence of the chunks once, in reading order, with its section."""
    width = line_width(chunk.text for chunk in chunks)
    seen: set[str] = set()
    found: list[Sentence] = []
    for chunk in chunks:
        section = tuple(strip_number(label) for label in chunk.section or [])
        for paragraph in paragraphs(chunk.text, width=width):
            for text in split_sentences(paragraph):
                text = " ".join(text.split())
                key = text.casefold()
                if key in seen:
                    continue  # chunks overlap
                seen.add(key)
                found.append(Sentence(text=text, chunk=chunk, section=section))
    return found


@dataclass(frozen=True)
class Part:
    """A major section of a source (a chapter; the sections below the title when the whole
    source sits under one heading), or the text before the first one (title "")."""

    title: str
    sentences: list[Sentence]
    sections: list[str]  # its own sections' titles, in order
    # The text before the first chapter of a source that has chapters (a preface, an
    # abstract): it speaks mostly of the document itself.
    is_front_matter: bool = False


def parts(sentences: list[Sentence]) -> list[Part]:
    """The source's sentences by major section, in reading order."""
    tops = {sentence.section[0] for sentence in sentences if sentence.section}
    level = 0 if len(tops) > 1 else 1
    grouped: dict[str, list[Sentence]] = {}
    for sentence in sentences:
        title = sentence.section[level] if len(sentence.section) > level else ""
        grouped.setdefault(title, []).append(sentence)
    found = []
    for title, members in grouped.items():
        sections: list[str] = []
        for sentence in members:
            below = sentence.section[level + 1] if len(sentence.section) > level + 1 else ""
            if below and below not in sections:
                sections.append(below)
        found.append(
            Part(
                title=title,
                sentences=members,
                sections=sections,
                is_front_matter=not title and level == 0,
            )
        )
    return found


def central(
    candidates: list[Sentence], *, among: list[list[Sentence]], limit: int
) -> list[Sentence]:
    """The `limit` candidates that say most of what sets their part apart: words frequent in
    it and rare in the other parts (`among`: every part's sentences), one per section first,
    in reading order. A definition ("X is a …") or a section's first sentence counts more."""
    from generation.documents.definitions import definition_of

    def terms(sentence: Sentence) -> set[str]:
        return set(content_terms(sentence.text))

    part_counts: Counter[str] = Counter()
    for part in among:
        part_counts.update({term for sentence in part for term in terms(sentence)})
    counts = Counter(term for sentence in candidates for term in terms(sentence))
    firsts: dict[tuple[str, ...], Sentence] = {}
    for sentence in candidates:
        firsts.setdefault(sentence.section, sentence)

    def score(sentence: Sentence) -> float:
        found = terms(sentence)
        weight = sum(
            counts[term] * math.log(1 + len(among) / part_counts[term])
            for term in found
            if counts[term] > 1 and part_counts[term]
        )
        weight /= math.sqrt(len(found) + 4)
        if definition_of(sentence):
            weight *= 1.5
        if firsts.get(sentence.section) is sentence:
            weight *= 1.2
        return weight

    ranked = sorted(candidates, key=score, reverse=True)
    chosen: list[Sentence] = []
    for sentence in ranked:  # one a section first, then the best of the rest
        if len(chosen) < limit and all(sentence.section != other.section for other in chosen):
            chosen.append(sentence)
    for sentence in ranked:
        if len(chosen) < limit and sentence not in chosen:
            chosen.append(sentence)
    order = {id(sentence): index for index, sentence in enumerate(candidates)}
    return sorted(chosen, key=lambda sentence: order[id(sentence)])


def clipped(text: str, max_chars: int) -> str:
    """`text` within `max_chars`, cut at a word."""
    if len(text) <= max_chars:
        return text
    return text[: max_chars - 2].rsplit(" ", 1)[0].rstrip(" ,;:") + " …"
