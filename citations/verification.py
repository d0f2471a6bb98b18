"""Checking that each cited passage supports the sentence that cites it: the one check for
every kind of citation (answers, studio documents; notes copy their answer's), and the
fields of the citation it makes (verified_citations).

Deterministic and free (no model call): a claim's content words (stopwords dropped, words
compared by their stems, language/words.py, as the extractive answerer does) are looked up in
each sentence of the cited chunk. The best sentence is the quote, cut verbatim from the
chunk text; the share of the claim's words it contains is the support score.

SUPPORT_THRESHOLD was measured with bench/measure_support.py on covid-qa-dev: claims made
of a question and its answer, against the passage around the answer (should support) and
against a passage of the same article far from the answer (should not). At 0.5, 96 % of
true supports pass and 7 % of the same-article wrong passages do; 0.4 lets 14 % through.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from language.sentences import BULLET_RE
from language.words import ends_a_sentence, terms
from library.models import Chunk

SUPPORT_THRESHOLD = 0.5
MARKER_RE = re.compile(r"\[(\d+)\]")
# A sentence ends at ., !, ? or … followed by space, or at a blank line.
SENTENCE_END_RE = re.compile(r"(?<=[.!?…])\s+|\n\s*\n")


MAX_QUOTE_CHARS = 600


@dataclass(frozen=True)
class Support:
    quote: str  # verbatim from the chunk text
    score: float  # share of the claim's content words found in the quote
    supported: bool
    start: int = 0  # the quote's span in the chunk text
    end: int = 0


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence in `text`, trimmed, so text[start:end] is verbatim."""
    spans = []
    start = 0
    for match in SENTENCE_END_RE.finditer(text):
        if match.group(0).count("\n") > 1 or _ends_here(text, start, match):
            spans.append((start, match.start()))
            start = match.end()
    spans.append((start, len(text)))
    trimmed = []
    for begin, end in spans:
        piece = text[begin:end]
        if piece.strip():
            begin += len(piece) - len(piece.lstrip())
            end -= len(piece) - len(piece.rstrip())
            trimmed.append((begin, end))
    return trimmed


# A word of at most four letters or a number, and its stop: "2.", "stol.", "ggfs.".
SHORT_WORD_STOP_RE = re.compile(r"(?:^|\s)\w{1,4}\.$")
ELLIPSIS_RE = re.compile(r"(?:\.\.\.|…)$")


def _ends_here(text: str, start: int, stop: re.Match[str]) -> bool:
    """Whether the stop before `stop` ends the sentence begun at `start`: not after an
    abbreviation or an initial (ends_a_sentence), nor after a short word followed by one in
    lower case, a shortening of a language the list does not know ("im 2. stol. př. n. l.",
    "ggfs. geändert"), nor after words left out mid-sentence ("'GPG error: ... invalid'")."""
    piece = text[start : stop.start()]
    next_is_lower = text[stop.end() : stop.end() + 1].islower()
    if next_is_lower and (SHORT_WORD_STOP_RE.search(piece) or ELLIPSIS_RE.search(piece)):
        return False
    return ends_a_sentence(piece)


def claim_pieces(text: str) -> list[tuple[int, int]]:
    """The sentences of `text` (sentence_spans), each list item a piece of its own: a small
    model writes its lists without full stops ("- Press Ctrl-Alt-F3 [1]\n- Type reset [2]"),
    and one sentence of two items would have each marker judged on both."""
    pieces = []
    for begin, end in sentence_spans(text):
        starts = [begin]
        for line in re.finditer(r"\n[ \t]*", text[begin:end]):
            if BULLET_RE.match(text[begin + line.end() : end]):
                starts.append(begin + line.start())
        for start, stop in zip(starts, [*starts[1:], end], strict=True):
            piece = text[start:stop]
            if piece.strip():
                start += len(piece) - len(piece.lstrip())
                pieces.append((start, stop))
    return pieces


def claims_by_marker(answer: str) -> dict[int, list[str]]:
    """The sentences of an answer that carry each [n], without their markers; each list
    item is a sentence of its own (claim_pieces).

    Markers opening a sentence ("… fish. [1] Then …") belong to the sentence before.
    """
    claims: dict[int, list[str]] = {}
    previous = ""
    for begin, end in claim_pieces(answer):
        sentence = answer[begin:end]
        leading = re.match(r"(\s*\[\d+\])+", sentence)
        if leading and previous:
            for n in MARKER_RE.findall(leading.group(0)):
                claims.setdefault(int(n), []).append(previous)
            sentence = sentence[leading.end() :]
        claim = MARKER_RE.sub("", sentence).strip()
        for n in MARKER_RE.findall(sentence):
            claims.setdefault(int(n), []).append(claim or previous)
        if claim:
            previous = claim
    return claims


def best_support(claim: str, chunk_text: str) -> Support:
    claim_terms = set(terms(claim))
    spans = sentence_spans(chunk_text) or [(0, len(chunk_text))]
    best_span, best_score = spans[0], 0.0  # a claim with no content words: the opening
    for span in spans if claim_terms else []:
        score = len(claim_terms & set(terms(chunk_text[span[0] : span[1]]))) / len(claim_terms)
        if score > best_score:
            best_span, best_score = span, score
    return Support(
        quote=chunk_text[best_span[0] : best_span[1]],
        score=round(best_score, 3),
        supported=best_score >= SUPPORT_THRESHOLD,
        start=best_span[0],
        end=best_span[1],
    )


def verify_citations(answer: str, chunk_texts: dict[int, str]) -> dict[int, Support]:
    """For each citation number, the quote and whether every sentence citing it is supported.

    The quote comes from the best-supported claim; `supported` needs all of them to pass,
    so one sentence that misuses a passage is enough to flag it.
    """
    claims = claims_by_marker(answer)
    result: dict[int, Support] = {}
    for n, chunk_text in chunk_texts.items():
        supports = [best_support(claim, chunk_text) for claim in claims.get(n, [])]
        if not supports:
            result[n] = best_support("", chunk_text)
            continue
        weakest = min(support.score for support in supports)
        # Quote the stretch of the chunk that covers every supporting sentence, when it is
        # short enough to read; else the best one alone.
        backing = [support for support in supports if support.supported] or supports
        start = min(support.start for support in backing)
        end = max(support.end for support in backing)
        if end - start > MAX_QUOTE_CHARS:
            best = max(backing, key=lambda support: support.score)
            start, end = best.start, best.end
        result[n] = Support(
            quote=chunk_text[start:end],
            score=weakest,
            supported=weakest >= SUPPORT_THRESHOLD,
            start=start,
            end=end,
        )
    return result


class Retrieved(Protocol):
    """A passage as the search found it (retrieval's Hit): its chunk and how close it was."""

    @property
    def chunk(self) -> Chunk: ...

    @property
    def similarity(self) -> float: ...


def verified_citations(
    text: str, cited: Mapping[int, Retrieved], *, attributed: Collection[int] = ()
) -> list[dict[str, Any]]:
    """The fields of a CitedPassage (citations/models.py) for each [n] of `text` that
    `cited` names: the passage, the quote that best supports the sentences citing it and
    whether all of them are supported; `attributed`: the numbers whose markers Loupe placed,
    not the model. Answers and studio documents store what this returns, so every citation
    is quoted and judged by the same rules."""
    supports = verify_citations(text, {n: passage.chunk.text for n, passage in cited.items()})
    return [
        {
            "n": n,
            "chunk": passage.chunk,
            "source": passage.chunk.source,
            "source_title": passage.chunk.source.title,
            "page": passage.chunk.page,
            "quote": supports[n].quote,
            "similarity": round(passage.similarity, 4),
            "supported": supports[n].supported,
            "support_score": supports[n].score,
            "attributed": n in attributed,
        }
        for n, passage in cited.items()
    ]
