"""A paragraph about each source, made once when it is read.

Summaries feed generated documents and the admin, never question answering: an answer
cites passages, and a summary is not one. With a chat model (and SOURCE_SUMMARIES "auto")
one call summarises the head of the text; otherwise the summary is extractive, the most
central sentences of the head, and labelled so wherever it is shown.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.models import User

from library.words import WORD_RE, content_terms, head, split_sentences
from providers.chat import chat, chat_available
from providers.errors import ProviderError

HEAD_WORDS = 3000  # enough to say what a document is about; the rest would only cost
SUMMARY_WORDS = 120
MAX_SENTENCES = 5
FREQUENT_TERMS = 30

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
    passages: list[str],
    title: str,
    language: str,
    user: User | None,
    extractive_only: bool = False,
) -> Summary:
    """The source's summary: by the chat model when there is one (and not
    `extractive_only`), else extractive.

    Raises ProviderError when the chat model fails; the caller decides what that means.
    """
    text = head(passages, words=HEAD_WORDS)
    if settings.SOURCE_SUMMARIES == "auto" and chat_available() and not extractive_only:
        return Summary(
            text=_llm_summary(text, title=title, language=language, user=user), mode="llm"
        )
    return Summary(text=extractive_summary(text), mode="extractive")


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


def extractive_summary(text: str) -> str:
    """Up to five of the text's own sentences, in their order, about SUMMARY_WORDS long:
    those that hold most of the words the text uses most often."""
    sentences = split_sentences(text)
    if not sentences:
        return ""
    terms = [content_terms(sentence) for sentence in sentences]
    counts = Counter(term for sentence_terms in terms for term in set(sentence_terms))
    frequent = {term: count for term, count in counts.most_common(FREQUENT_TERMS) if count > 1}

    def score(index: int) -> float:
        found = sum(frequent.get(term, 0) for term in set(terms[index]))
        # Long sentences hold more words by their length alone.
        return found / math.sqrt(len(terms[index]) + 4)

    chosen: list[int] = []
    length = 0
    for index in sorted(range(len(sentences)), key=lambda i: (-score(i), i)):
        words = len(WORD_RE.findall(sentences[index]))
        if chosen and length + words > SUMMARY_WORDS:
            continue
        if not chosen and words > SUMMARY_WORDS and len(sentences) > 1:
            continue  # a run-on block (a table, a list without stops) says little
        chosen.append(index)
        length += words
        if len(chosen) == MAX_SENTENCES:
            break
    if not chosen:
        chosen = [0]
    return " ".join(sentences[index] for index in sorted(chosen))
