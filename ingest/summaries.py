"""A paragraph about each source, made once when it is read.

Summaries feed generated documents and the admin, never question answering: an answer
cites passages, and a summary is not one. With a chat model (and SOURCE_SUMMARIES "auto")
one call summarises the head of the text; otherwise the summary is extractive, the most
central sentences of the head, and labelled so wherever it is shown. Its sentences are read
without the lines that only name things (the section headings, the labels of note boxes):
a page's text would glue them to the sentence after ("1.1.1 The shell prompt Upon starting
the system …").
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.models import User
from django.utils import translation
from django.utils.translation import gettext, ngettext

from ingest.passages import Passage
from ingest.structure import strip_number
from language.definitions import defined_term
from language.sentences import line_width, paragraphs, stands_alone
from language.words import ADMONITIONS, WORD_RE, content_terms, head, split_sentences
from providers.chat import chat, chat_available
from providers.errors import ProviderError

HEAD_WORDS = 3000  # enough to say what a document is about; the rest would only cost
SUMMARY_WORDS = 120
MAX_SENTENCES = 5
FREQUENT_TERMS = 30
# A document of at least MIN_PARTS chapters ends its summary by naming them.
MIN_PARTS = 3
MAX_PARTS_SHOWN = 15
MIN_SENTENCE_WORDS = 40
RESTATING_SHARE = 0.5
DEFINING_WEIGHT = 4.0

SYSTEM_PROMPT = f"""You summarise documents. You are given the beginning of one.

Write one paragraph of about {SUMMARY_WORDS} words that says what the document is and what \
it covers. Write it in the document's own language, whatever language these instructions \
are in. Plain text only: no markdown, no headings, no lists, no introduction like \
"This summary"."""


@dataclass(frozen=True)
class Summary:
    text: str
    mode: str  # Source.SummaryMode: "llm" or "extractive"


def summarize(
    *,
    passages: Sequence[Passage],
    title: str,
    language: str,
    user: User | None,
    extractive_only: bool = False,
) -> Summary:
    """The source's summary: by the chat model when there is one (and not
    `extractive_only`), else extractive.

    Raises ProviderError when the chat model fails; the caller decides what that means.
    """
    if settings.SOURCE_SUMMARIES == "auto" and chat_available() and not extractive_only:
        text = head([passage.text for passage in passages], words=HEAD_WORDS)
        return Summary(
            text=_llm_summary(text, title=title, language=language, user=user), mode="llm"
        )
    text = head(_without_labels(_head_passages(passages)), words=HEAD_WORDS)
    parts = _parts(passages)
    if len(parts) < MIN_PARTS:
        return Summary(text=extractive_summary(text, language=language), mode="extractive")
    # The head of a long document is its preface and first chapter: its parts say what
    # the rest covers.
    shown = parts[:MAX_PARTS_SHOWN]
    titles = ", ".join(shown)
    with translation.override(language or None):
        if len(parts) > len(shown):
            titles += " " + gettext("and %(count)s more") % {"count": len(parts) - len(shown)}
        covered = ngettext(
            "%(count)s part: %(titles)s.", "%(count)s parts: %(titles)s.", len(parts)
        ) % {"count": len(parts), "titles": titles}
    budget = max(MIN_SENTENCE_WORDS, SUMMARY_WORDS - len(WORD_RE.findall(covered)))
    sentences = extractive_summary(text, language=language, words=budget)
    return Summary(text=f"{sentences} {covered}".strip(), mode="extractive")


def _parts(passages: Sequence[Passage]) -> list[str]:
    """The document's major sections in reading order, without their numbers: its chapters,
    or the sections under its title when everything sits under one."""
    chapters: dict[str, list[str]] = {}
    for passage in passages:
        for start in passage.sections:
            if not start.path:
                continue
            below = chapters.setdefault(start.path[0], [])
            if len(start.path) > 1 and start.path[1] not in below:
                below.append(start.path[1])
    titles = next(iter(chapters.values())) if len(chapters) == 1 else list(chapters)
    return [strip_number(title) for title in titles]


def _head_passages(passages: Sequence[Passage]) -> list[Passage]:
    """The passages that hold the first HEAD_WORDS words: only they are read for sentences."""
    taken: list[Passage] = []
    words = 0
    for passage in passages:
        taken.append(passage)
        words += len(WORD_RE.findall(passage.text))
        if words >= HEAD_WORDS:
            break
    return taken


def _without_labels(passages: Sequence[Passage]) -> list[str]:
    """The passages' texts without their heading lines (the titles of the sections they
    are in, Markdown's "#" before them or not), the labels of note boxes and table rows."""
    titles = {
        _normal(title) for passage in passages for start in passage.sections for title in start.path
    }

    def names_only(line: str) -> bool:
        # A table's Markdown rows (a sheet's, a document's) are cells, not sentences.
        if line.lstrip().startswith("|"):
            return True
        normal = _normal(line.lstrip("#"))
        return normal in titles or normal.rstrip(":") in ADMONITIONS

    return [
        "\n".join(line for line in passage.text.split("\n") if not names_only(line))
        for passage in passages
    ]


def _normal(text: str) -> str:
    return " ".join(text.split()).casefold()


def _llm_summary(text: str, *, title: str, language: str, user: User | None) -> str:
    known = f" (detected language: {language})" if language else ""
    prompt = f"The beginning of the document “{title}”{known}:\n\n{text}"
    reply = chat(
        [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": prompt}],
        user=user,
        temperature=0.2,
    )
    summary = " ".join(reply.text.split())
    if not summary:
        raise ProviderError(f"The chat model {reply.model} returned an empty summary.")
    return summary


def extractive_summary(text: str, *, language: str = "", words: int = SUMMARY_WORDS) -> str:
    """Up to five of the text's own sentences, in their order, about `words` long:
    those that hold most of the words the text uses most often, a definition first, among
    the sentences that read well alone (language/sentences.py) when there are any."""
    width = line_width([text])
    sentences = [
        " ".join(sentence.split())
        for paragraph in paragraphs(text, width=width)
        for sentence in split_sentences(paragraph)
    ]
    if not sentences:
        return ""
    sentences = [sentence for sentence in sentences if stands_alone(sentence, language)] or (
        sentences
    )
    terms = [content_terms(sentence) for sentence in sentences]
    counts = Counter(term for sentence_terms in terms for term in set(sentence_terms))
    frequent = {term: count for term, count in counts.most_common(FREQUENT_TERMS) if count > 1}
    defining = [defined_term(sentence, language) is not None for sentence in sentences]

    def score(index: int) -> float:
        found = sum(frequent.get(term, 0) for term in set(terms[index]))
        # Long sentences hold more words by their length alone; one that says what
        # something is ("The Debian Project is an association …") says what a document is
        # about better than one that uses its words.
        return (
            found / math.sqrt(len(terms[index]) + 4) * (DEFINING_WEIGHT if defining[index] else 1)
        )

    chosen: list[int] = []
    length = 0
    for index in sorted(range(len(sentences)), key=lambda i: (-score(i), i)):
        size = len(WORD_RE.findall(sentences[index]))
        if chosen and length + size > words:
            continue
        if not chosen and size > words and len(sentences) > 1:
            continue  # a run-on block (a table, a list without stops) says little
        if any(_restates(terms[index], terms[other]) for other in chosen):
            continue  # "A filename is referred by …", "A directory name is referred by …"
        chosen.append(index)
        length += size
        if len(chosen) == MAX_SENTENCES:
            break
    if not chosen:
        chosen = [0]
    return " ".join(sentences[index] for index in sorted(chosen))


def _restates(terms: list[str], other: list[str]) -> bool:
    """Half or more of the shorter sentence's content words are the other one's."""
    one, two = set(terms), set(other)
    return bool(one and two) and len(one & two) >= RESTATING_SHARE * min(len(one), len(two))
