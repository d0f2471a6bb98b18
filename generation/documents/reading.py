"""A source read whole, as a person reads it, for the offline documents: paragraphs rebuilt
from a PDF's wrapped lines (headings, captions, code and list items kept apart), then the
sentences worth quoting on their own: whole, prose, about the subject rather than about the
document, and free of addresses, version strings and words the PDF ran together."""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

from generation.documents.inputs import Inputs
from ingest.structure import strip_number
from library.models import Chunk, Source
from library.words import content_terms, split_sentences
from retrieval.search import Hit

# A wrapped line fills most of the text's width; a shorter one ends its paragraph (or is a
# heading, a caption, a table row) unless the next line plainly continues it.
FULL_LINE_SHARE = 0.7
# The label of a note or tip box stands on a line of its own.
ADMONITION_RE = re.compile(
    r"^(?:Note|Tip|Warning|Caution|Important|Hinweis|Tipp|Warnung|Achtung|Wichtig|Vorsicht)$"
)
BULLET_RE = re.compile(r"^(?:[•◦▪●■–*]|-(?=\s)|\d{1,2}[.)](?=\s))\s*")
MIN_WORDS, MAX_WORDS = 6, 35

URL_RE = re.compile(r"://|\bwww\.|\b[\w-]+\.(?:org|com|net|html?|de)\b", re.I)
VERSION_RE = re.compile(r"\b\d+\.\d+\.\d+|\b(?:version|Version|release|Release)\s*\d|\bv\d+\.\d")
SECTION_REF_RE = re.compile(
    r"\b(?:Section|Chapter|Table|Figure|Abschnitt|Kapitel|Tabelle|Abbildung)\s+\d", re.I
)
# A sentence about the text itself, or one that leans on what comes before or after it.
SELF_REFERENCE_RE = re.compile(
    r"\b(?:this|the present|the following)\s+(?:document|book|manual|guide|chapter|section|"
    r"reference|tutorial|page|table|list|example|examples|command|commands)\b"
    r"|\b(?:dies\w*|folgende\w*|nachfolgende\w*)\s+(?:Dokument|Buch|Handbuch|Anleitung|Kapitel|"
    r"Abschnitt|Referenz|Seite|Tabelle|Liste|Beispiel\w*|Befehl\w*)\b"
    r"|^(?:the\s+)?following\b|^(?:die\s+|der\s+|das\s+)?folgende\w*\b|\bas follows\b"
    r"|\bfollowing(?:s)?\W*$|\bwie folgt\b|\bfolgende\w*\W*$"
    r"|\b(?:below|above|unten|oben)\b",
    re.I,
)
LEANING_START_RE = re.compile(
    r"^(?:It|This|These|That|Those|They|Such|Here|He|She|So|But|And|Or|Also|Then|"
    r"Otherwise|Similarly|Es|Dies|Diese|Dieser|Dieses|Hier|Dort|Er|Aber|Und|Oder|"
    r"Auch|Dann|Sonst|Also|Daher|Dabei|Jetzt|Dazu|Deshalb|Danach|Somit|Dennoch|Trotzdem|"
    r"Außerdem|Zudem|Hierbei|Hiermit|Seitdem|Since then|Please|Bitte|See|Siehe|Lesen Sie|"
    r"Note|Hinweis|I|Ich)\b"
    r"|^\d+[A-ZÄÖÜ]"  # a footnote's number run into the sentence
)
FIRST_PERSON_RE = re.compile(r"\b(?:I|me|my|ich|mir|mich|mein\w*)\b")
# An instruction to the reader ("Press Enter.", "Wählen Sie … aus"): a step, not a statement.
IMPERATIVE_RE = re.compile(
    r"^(?:Press|Click|Type|Select|Move|Run|Execute|Install|Open|Start|Choose|Enter|Edit|Go|"
    r"Remove|Copy|Insert|Tick|Push|Pull|Restart|Reboot|Log in|Sign in)\b|^[A-ZÄÖÜ]\w*en Sie\b"
)
# A sentence cut at an abbreviation's full stop ("… such as, e.g.", "(a.k.a.").
ENDS_ON_ABBREVIATION_RE = re.compile(
    r"\b(?:e\.g|i\.e|a\.k\.a|z\.\s?B|d\.\s?h|u\.\s?a|bzw|vgl|cf|ca|evtl|ggf|usw)\.$", re.I
)
# A token of code or a path: a reader quotes prose, not a command line.
TECHNICAL_RE = re.compile(r"[/\\=$<>{}|_@#^~]|^-|\w\(\d\)|\w:\d")
# Two lines of a table or a box run together: "… setuid root binary For applications …".
MERGED_LINES_RE = re.compile(r"[a-z] (?:For|The|This|These|It|In|If|When|Wenn|Für) [a-z]")
# Words longer than this are two run together by the PDF's text, except in languages that
# write compounds as one word.
LONGEST_WORD = 20
LONGEST_COMPOUND = {"de": 30, "nl": 30, "sv": 30, "da": 30, "no": 30, "fi": 30}


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


def paragraphs(text: str, *, width: int) -> list[str]:
    """The text's paragraphs and list items, each on one line: a line continues the one
    before when that one filled the width (`width`: the source's usual full line), or when it
    starts in lower case after a line that ended mid-sentence."""
    full = max(30, int(width * FULL_LINE_SHARE))
    found: list[list[str]] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            found.append([])
            continue
        bullet = BULLET_RE.match(line)
        if bullet:
            found.append([line[bullet.end() :]])
            continue
        if ADMONITION_RE.match(line):
            found += [[line], []]
            continue
        previous = found[-1][-1] if found and found[-1] else ""
        continues = previous and (
            (len(previous) >= full and not previous.endswith(":"))
            or (line[0].islower() and not previous.endswith((".", "!", "?", ":")))
        )
        if continues:
            found[-1].append(line)
        else:
            found.append([line])
    return [" ".join(lines) for lines in found if lines]


def line_width(chunks: list[Chunk]) -> int:
    """The length of the source's full lines: the 90th percentile of its line lengths."""
    lengths = sorted(len(line.strip()) for chunk in chunks for line in chunk.text.splitlines())
    return lengths[int(len(lengths) * 0.9)] if lengths else 0


def read_sentences(chunks: list[Chunk]) -> list[Sentence]:
    """Every whole sentence of the chunks once, in reading order, with its section."""
    width = line_width(chunks)
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


def is_whole(text: str) -> bool:
    """Starts like a sentence (a capital) and ends with a full stop or "!", not at an
    abbreviation."""
    body = text.lstrip("\"'“„”‘’«»")
    # A sentence that starts with a number is mostly the tail of one cut at an abbreviation.
    return (
        bool(body)
        and body[0].isupper()
        and text.endswith((".", "!"))
        and not ENDS_ON_ABBREVIATION_RE.search(text)
    )


def is_prose(text: str, language: str = "") -> bool:
    """Words rather than code, and no address, version string or run-together word."""
    words = text.split()
    longest = LONGEST_COMPOUND.get(language, LONGEST_WORD)
    technical = sum(bool(TECHNICAL_RE.search(word)) for word in words)
    return (
        technical <= max(1, len(words) // 8)
        and not URL_RE.search(text)
        and not VERSION_RE.search(text)
        and not re.search(rf"[^\W\d_]{{{longest + 1},}}", text)
        and not MERGED_LINES_RE.search(text)
    )


def stands_alone(text: str, language: str = "") -> bool:
    """A sentence worth quoting alone: whole prose of a sensible length, not a question,
    not about the document itself, not leaning on the sentence before."""
    words = text.split()
    return (
        MIN_WORDS <= len(words) <= MAX_WORDS
        and is_whole(text)
        and is_prose(text, language)
        and not SECTION_REF_RE.search(text)
        and not SELF_REFERENCE_RE.search(text)
        and not LEANING_START_RE.match(text)
        and not FIRST_PERSON_RE.search(text)
        and not IMPERATIVE_RE.match(text)
    )


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
