"""A ready source's guide: its key topics and up to three questions it can answer, shown
under its summary; the notebook's chat suggests three of them across the ticked sources.

Offline the guide is made from the source's structure: a PDF's outline (its bookmarks), else
the Markdown headings in its text. Each question asks what the source says about one of its
own sections, so it is answerable and reads as a question a person would ask. A source
without headings gets no questions rather than made-up ones. With a chat model (and
SOURCE_SUMMARIES "auto") one cheap call per source at ingest writes the guide instead,
billed to the source's owner; the outline's stays when the call fails.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable
from pathlib import PurePath

from django.conf import settings

from language.words import head
from library.models import Source
from notebooks.models import SourceGuide
from providers.chat import chat, chat_available
from providers.errors import ProviderError

logger = logging.getLogger(__name__)

MAX_TOPICS = 6
MAX_QUESTIONS = 3
HEADING_RE = re.compile(r"^[ ]{0,3}#{1,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
NUMBERING_RE = re.compile(r"^(?:\d+(?:\.\d+)*\.?|[IVXLC]+\.|[A-Z]\.)\s+")
QUESTION_WORDS = frozenset(("how", "why", "what", "when", "where", "which", "who"))
# Headings that name a part of every document, not what this one is about.
GENERIC = frozenset(
    (
        "contents", "table of contents", "introduction", "preface", "foreword", "abstract",
        "summary", "conclusion", "conclusions", "references", "bibliography", "appendix",
        "index", "acknowledgements", "acknowledgments", "glossary", "notes", "overview",
        "inhalt", "inhaltsverzeichnis", "einleitung", "vorwort", "zusammenfassung", "fazit",
        "literatur", "literaturverzeichnis", "anhang", "glossar", "danksagung",
    )
)  # fmt: skip


def guides_for(sources: Iterable[Source]) -> dict[int, SourceGuide]:
    """The guides of the ready sources among `sources`. Ingest writes each source's guide
    (`write_guide`); a ready source without one whose ingest is over (read before guides
    were written at ingest, or whose worker died before) gets the outline's here, never the
    model's: a page view makes no model call. A source being read again loses its guide, to
    get a new one once ready (its headings may have changed)."""
    sources = list(sources)
    ready = [source for source in sources if source.status == Source.Status.READY]
    again = [source.pk for source in sources if source.status != Source.Status.READY]
    if again:
        SourceGuide.objects.filter(source_id__in=again).delete()
    # A guide without a mode has never been written (a row from before guides had modes).
    made = SourceGuide.objects.filter(source__in=ready).exclude(mode="")
    guides = {guide.source_id: guide for guide in made}
    for source in ready:
        # A source still in a stage is in its ingest, which writes the guide after the summary.
        if source.pk not in guides and not source.stage:
            guides[source.pk] = _store(source, *outline_guide(source), SourceGuide.Mode.OUTLINE)
    return guides


def write_guide(source: Source) -> SourceGuide:
    """Write the source's guide, a step of its ingest once it is ready: with a chat model
    (and SOURCE_SUMMARIES "auto") one call, billed like the summary to whom the ingest
    bills (the source's owner); else, or when the call fails (logged and kept in
    `error`), the outline's."""
    topics, questions = outline_guide(source)
    mode, error = SourceGuide.Mode.OUTLINE, ""
    if settings.SOURCE_SUMMARIES == "auto" and chat_available():
        try:
            topics, questions = model_guide(source)
            mode = SourceGuide.Mode.LLM
        except ProviderError as exc:
            logger.warning("guide of source %s: %s", source.pk, exc)
            error = str(exc)[:500]
    return _store(source, topics, questions, mode, error)


def _store(
    source: Source, topics: list[str], questions: list[str], mode: str, error: str = ""
) -> SourceGuide:
    guide, _created = SourceGuide.objects.update_or_create(
        source=source,
        defaults={"topics": topics, "questions": questions, "mode": mode, "error": error},
    )
    return guide


# Offline: from the source's structure ---------------------------------------------------


def headings(source: Source) -> list[str]:
    """The source's section titles in reading order: for a PDF the section paths its chunks
    carry (its outline, or its numbered headings; ingest/structure.py), the chapters first
    (what the document is about), then their sections; else the Markdown headings of its
    text, a short section among them (chunks carry one path each, so a few lines under a
    heading may sit in the next section's chunk)."""
    titles: list[str] = []
    if source.kind == Source.Kind.PDF:
        by_depth: dict[int, list[str]] = {}
        for path in source.chunks.order_by("ordinal").values_list("section", flat=True):
            for depth, title in enumerate(path or []):
                if title not in by_depth.setdefault(depth, []):
                    by_depth[depth].append(title)
        titles = [title for depth in sorted(by_depth) for title in by_depth[depth]][:200]
    if not titles:
        texts = source.chunks.order_by("ordinal").values_list("text", flat=True)
        for text in texts:
            titles += [match.group(1) for match in HEADING_RE.finditer(text)]
    seen: set[str] = set()
    cleaned: list[str] = []
    for title in titles:
        topic = _clean(title)
        if topic and topic.casefold() not in seen:
            seen.add(topic.casefold())
            cleaned.append(topic)
    return cleaned


def _clean(title: str) -> str:
    """A heading as a topic: its numbering and markup dropped; "" for one that names no
    topic (generic, a number, too long to be a heading)."""
    text = " ".join(title.replace("*", "").replace("_", " ").replace("`", "").split())
    text = NUMBERING_RE.sub("", text).strip(" :.-–—")
    words = text.split()
    if not words or len(words) > 10 or len(text) > 80:
        return ""
    if sum(char.isalpha() for char in text) < 3:
        return ""
    if text.casefold() in GENERIC:
        return ""
    return text


def outline_guide(source: Source) -> tuple[list[str], list[str]]:
    """(topics, questions) from the source's headings; the first heading is left out when it
    merely repeats the source's title."""
    topics = headings(source)
    name = _clean(source.title) or source.title
    if topics and topics[0].casefold() == name.casefold():
        topics = topics[1:]
    topics = topics[:MAX_TOPICS]
    text = "\n".join(source.chunks.order_by("ordinal").values_list("text", flat=True)[:300])
    # A title that is still the uploaded file's name ("debian-reference.en", "scan_0412") is
    # no name a person would say: the question says "this document" instead.
    # A note saved from an answer is titled with its question: no name either.
    file_name = " " not in source.title and source.title == PurePath(source.filename).stem
    named = "" if file_name or name.endswith("?") else name
    note = source.kind == Source.Kind.NOTE
    questions = [
        _question(topic, title=named, language=source.language, text=text, note=note)
        for topic in topics
    ]
    return topics, questions[:MAX_QUESTIONS]


GERMAN_ARTICLES = frozenset(("der", "die", "das", "den", "dem", "des", "ein", "eine", "einer"))


def _question(topic: str, *, title: str, language: str, text: str = "", note: bool = False) -> str:
    """A question about one of the source's sections, in its language; `title` "" says
    "this document" (or "this note")."""
    if topic.endswith("?"):
        return topic  # a heading that is a question already
    first, _space, rest = topic.partition(" ")
    if language == "de":
        subject = f"„{title}“" if title else "diese Notiz" if note else "dieses Dokument"
        # German nouns keep their capital. A heading with its article reads "über die
        # Systeminitialisierung"; one without takes no article, whose gender Loupe cannot
        # know ("über GNU/Linux-Lehrstunde" is wrong): "zum Thema GNU/Linux-Lehrstunde".
        if first.casefold() in GERMAN_ARTICLES and rest:
            return f"Was sagt {subject} über {first.lower()} {rest}?"
        return f"Was sagt {subject} zum Thema {topic}?"
    if first.casefold() in QUESTION_WORDS:
        return f"{topic}?"  # "How to leave the command prompt"
    if first[:1].isupper() and first[1:].islower() and _mostly_lower(first, text):
        # "Breeding" -> "breeding", "The shell" -> "the shell"; a name the source writes
        # with its capital ("Debian", "Vienna") keeps it.
        topic = first.lower() + (f" {rest}" if rest else "")
    if not title:
        return f"What does this {'note' if note else 'document'} say about {topic}?"
    return f"What does “{title}” say about {topic}?"


def _mostly_lower(word: str, text: str) -> bool:
    """Whether the source writes `word` in lower case at least as often as with its capital
    inside a sentence (after a lower-case word: not a heading's or a sentence's start)."""
    lower = len(re.findall(rf"\b{re.escape(word.lower())}\b", text))
    capital = len(re.findall(rf"(?<=[a-z,;] ){re.escape(word)}\b", text))
    return lower >= capital


# With a model: one call per source ------------------------------------------------------

GUIDE_PROMPT = f"""You write a short guide to a document for someone about to ask questions \
about it. You are given its beginning and its section headings. Reply with JSON only: \
{{"topics": [up to {MAX_TOPICS} short key topics, a few words each], "questions": [exactly \
{MAX_QUESTIONS} questions a reader could ask that the document answers]}}. Write in the \
document's own language. Questions must be specific to this document, each one sentence."""


def model_guide(source: Source) -> tuple[list[str], list[str]]:
    texts = list(source.chunks.order_by("ordinal").values_list("text", flat=True)[:40])
    outline = "\n".join(f"- {title}" for title in headings(source)[:30]) or "(none)"
    prompt = (
        f"Document: {source.title}\n\nHeadings:\n{outline}\n\nBeginning:\n{head(texts, words=1500)}"
    )
    reply = chat(
        [{"role": "system", "content": GUIDE_PROMPT}, {"role": "user", "content": prompt}],
        user=source.owner,
        temperature=0.2,
        max_tokens=400,
    )
    try:
        data = json.loads(reply.text.strip().removeprefix("```json").strip("`\n "))
        topics = [" ".join(str(topic).split()) for topic in data["topics"]][:MAX_TOPICS]
        questions = [" ".join(str(q).split()) for q in data["questions"]][:MAX_QUESTIONS]
    except (ValueError, KeyError, TypeError) as exc:
        raise ProviderError(
            f"The chat model {reply.model} wrote no usable guide ({type(exc).__name__})."
        ) from exc
    questions = [question for question in questions if question.endswith("?")]
    if not questions:
        raise ProviderError(f"The chat model {reply.model} wrote no questions for the guide.")
    return [topic for topic in topics if topic], questions


def suggested_questions(sources: list[Source], guides: dict[int, SourceGuide]) -> list[str]:
    """Three questions for the chat, taken in turn from each source's guide (the first of
    each source's, then the second, ...), so several sources are represented."""
    per_source = [guides[source.pk].questions for source in sources if source.pk in guides]
    suggested: list[str] = []
    for round_ in range(MAX_QUESTIONS):
        for questions in per_source:
            if round_ < len(questions) and questions[round_] not in suggested:
                suggested.append(questions[round_])
            if len(suggested) == MAX_QUESTIONS:
                return suggested
    return suggested
