"""A question made ready for the model: refused, answered by Loupe (a memory command, an
extractive answer), or searched and put into a prompt; and the model's reply stored."""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from django.contrib.auth.models import User
from django.utils.translation import gettext as _

from analytics.services import Timing
from generation import chat_style, extractive, not_covered, prompts
from generation.answering.prompt import Turn, _history, _latest, _prompt, extractive_passages
from generation.answering.storing import Answer, _store
from generation.citations import (
    MARKER_RE,
    MappedAnswer,
    attribute_sentences,
    hollow,
    map_markers,
    marker_numbers,
    move_opening_markers,
    renumbered,
    says_nothing,
    supported_markers,
    with_announced_lines,
    without_headings,
    without_restatements,
)
from generation.rewrite import standalone_query
from language.words import terms
from library.languages import detect_language
from library.models import Source
from memory import commands as memory_commands
from memory.services import facts_to_give
from notebooks.models import Conversation, Message, Notebook
from providers.chat import chat_available
from retrieval.closeness import part_closeness
from retrieval.search import Hit
from retrieval.services import Retrieved, retrieve_assessed
from sharing import access
from texts.errors import UserFacingError

logger = logging.getLogger(__name__)


class QuestionRefused(UserFacingError):
    """The question cannot be asked as it is: empty, or about no source of the notebook."""


# The words of prose an answer needs before its language is judged: manual-qa's and the
# formats set's answers of fewer are heard as Romanian, Pidgin or Ligurian; none of 15 or
# more was. Code, addresses, tags and markers are no language.
MIN_ANSWER_WORDS_JUDGED = 15
NOT_PROSE_RE = re.compile(
    r"```.*?```|`[^`\n]*`|<[^>\n]*>|!?\[[^\]\n]*\]\([^)\n]*\)|\S+://\S+", re.S
)
PROSE_WORD_RE = re.compile(r"[^\W\d_]{2,}")


@dataclass
class _Prepared:
    """A question made ready for the model: retrieval done and the prompt built; or, when
    no model call is needed (refusals, extractive mode), already answered and stored."""

    notebook: Notebook
    conversation: Conversation | None
    question: str
    hits: list[Hit]
    messages: list[dict[str, str]]
    user: User  # who asked: a new conversation is theirs
    answer: Answer | None = None
    search_query: str = ""  # the rewritten follow-up the search used; "": the question
    chosen_sources: Sequence[int] | None = None  # the ids searched; None: all
    retrieved: Retrieved | None = None
    memories: list[str] = field(default_factory=list)  # the asker's facts the model was given

    def store_reply(self, text: str, model: str) -> Answer:
        """Give the sentences the model left uncited the marker of a passage that supports
        them (attributed), map the markers onto the passages, verify them, store it all.
        A reply saying the passages do not answer becomes the fixed "not covered" answer."""
        if not_covered.model_declined(text):
            return self._stored(not_covered.reply(self.hits), Message.Mode.REFUSAL, [], model)
        # What Loupe wrote in the prompt, the passages' titles and kinds included: a small
        # model may answer with one of them ("The Waste Land (Document) [1][2].").
        sources = {hit.chunk.source for hit in self.hits}
        said = " ".join(
            (
                self.question,
                self.search_query,
                prompts.SYSTEM_PROMPT,
                prompts.CITATION_REMINDER,
                *(f"{source.title} {source.get_kind_display()}" for source in sources),
            )
        )
        passages = [hit.chunk.text for hit in self.hits]
        written = move_opening_markers(text)
        # The lines a sentence announces first: "… wie folgt beheben: [1]" says nothing
        # until its passage's command follows it.
        text = with_announced_lines(
            without_restatements(without_headings(written, passages), said), passages
        )
        asked = f"{self.question} {self.search_query}"
        if says_nothing(text, said, asked=asked) and self.hits:
            # A small model may write nothing but markers ("[1][2] [1][3]"), put them
            # where the answer should be ("The tool … is [1][5]."), or answer with the
            # title of the section that tells: no answer to show, so the passages' own
            # sentences are, labelled as quotes, from those it pointed at.
            logger.warning(
                "The chat model's answer says nothing: %r; quoting instead", written[:80]
            )
            return self._quoted(model, pointed=marker_numbers(text or written, len(self.hits)))
        if self._in_another_language(text):
            # "Die Passage [1] states that …": the asker reads German, and so do the
            # passages, which say it in the asker's words.
            logger.warning("The chat model answered in another language: %r; quoting", text[:80])
            return self._quoted(model, pointed=marker_numbers(text, len(self.hits)))
        pointed = supported_markers(text, passages)
        attribution = attribute_sentences(pointed.text, passages)
        mapped = map_markers(attribution.text, len(self.hits))
        return self._stored(
            mapped.text,
            Message.Mode.LLM,
            mapped.order,
            model,
            attributed={
                mapped.order.index(number) + 1
                for number in attribution.attributed | pointed.placed
                if number in mapped.order
            },
        )

    def _in_another_language(self, text: str) -> bool:
        """Whether the model wrote its answer in another language than the question's,
        though passages in the question's language were there to answer from. A small
        model told to answer in German may start so and go on in English. Short answers
        are not judged: a few words ("$1,414", a menu line) are heard as any language, and
        neither are code, addresses and tags (a reply of links and commands)."""
        prose = NOT_PROSE_RE.sub(" ", MARKER_RE.sub(" ", text))
        if len(PROSE_WORD_RE.findall(prose)) < MIN_ANSWER_WORDS_JUDGED:
            return False
        asked = detect_language(self.question)
        written = detect_language(prose)
        return (
            bool(asked)
            and written not in ("", asked)
            and any(hit.chunk.source.language == asked for hit in self.hits)
        )

    def answered(self, text: str, mode: str, hits: list[Hit], order: list[int]) -> _Prepared:
        """The question answered without the chat model (a refusal, a memory command, an
        extractive answer) and stored at once. Refusals and extractive answers come without
        a rewrite: before the search, or with no chat model to rewrite."""
        answer = _store(
            user=self.user,
            notebook=self.notebook,
            conversation=self.conversation,
            question=self.question,
            text=text,
            mode=mode,
            hits=hits,
            order=order,
            model="",
            chosen_sources=self.chosen_sources,
        )
        return replace(self, hits=hits, answer=answer)

    def _quoted(self, model: str, *, pointed: Sequence[int] = ()) -> Answer:
        """The passages' own sentences, labelled as quotes: those of the passages the model
        pointed at (`pointed`, numbers of self.hits) when they speak of the question, else
        of all. A model that answers "The tool … is [4][5]." has chosen its passages, often
        rightly, where the question's words alone may rank another one's sentences first."""
        closeness: Sequence[tuple[float, ...]] = ()
        if self.retrieved is not None:
            closeness = part_closeness(
                hits=self.hits,
                query_vector=self.retrieved.query_vector,
                model=self.retrieved.model,
            )
        passages = extractive_passages(self.hits, closeness=closeness)
        limit = chat_style.extractive_sentences(self.notebook)
        text = ""
        if pointed:
            chosen = extractive.answer(
                self.question, [passages[n - 1] for n in pointed], limit=limit
            )
            # Sentences about the question, not the opening quoted when none is
            # ("Bread (Document) [3]." points at a title).
            if set(terms(chosen)) & set(terms(self.question)):
                text = renumbered(chosen, list(pointed))
        if not text:
            text = extractive.answer(self.question, passages, limit=limit)
        mapped = map_markers(text, len(self.hits))
        if hollow(mapped.text):
            return self._stored(not_covered.reply(self.hits), Message.Mode.REFUSAL, [], model)
        return self._stored(mapped.text, Message.Mode.EXTRACTIVE, mapped.order, model)

    def _stored(
        self,
        text: str,
        mode: str,
        order: list[int],
        model: str,
        *,
        attributed: set[int] | None = None,
    ) -> Answer:
        return _store(
            user=self.user,
            notebook=self.notebook,
            conversation=self.conversation,
            question=self.question,
            text=text,
            mode=mode,
            hits=self.hits,
            order=order,
            model=model,
            search_query=self.search_query,
            attributed=attributed,
            chosen_sources=self.chosen_sources,
            memories=self.memories,
        )


def _prepare(
    *,
    user: User,
    notebook: Notebook,
    question: str,
    conversation: Conversation | None,
    source: Source | None,
    chosen_sources: Sequence[int] | None = None,
    notebook_sources: Sequence[Source] | None = None,
    timing: Timing | None = None,
    turns: Sequence[Turn] | None = None,
) -> _Prepared:
    question = question.strip()
    if not question:
        raise QuestionRefused(_("The question is empty."))
    command = memory_commands.parse(question)
    history = _history(conversation) if turns is None else _latest(turns)

    asked = _Prepared(notebook, conversation, question, [], [], user, chosen_sources=chosen_sources)

    if command is not None:
        # Answered by Loupe, whatever the sources: a MemoryRefused says what to write instead.
        reply = memory_commands.run(command, user=user, notebook=notebook)
        return asked.answered(reply, Message.Mode.COMMAND, [], [])

    sources = _sources_asked(
        notebook=notebook,
        notebook_sources=notebook_sources,
        chosen_sources=chosen_sources,
        source=source,
    )
    if not sources:
        return asked.answered(_(prompts.EMPTY_NOTEBOOK_REPLY), Message.Mode.REFUSAL, [], [])
    ready = [source for source in sources if source.status == Source.Status.READY]
    if not ready:
        return asked.answered(_(prompts.NOTHING_READY_REPLY), Message.Mode.REFUSAL, [], [])

    query, retrieved = _search(
        user=user,
        notebook=notebook,
        question=question,
        history=history,
        source=source,
        chosen_sources=chosen_sources,
    )
    if timing is not None:
        timing.mark_retrieved()
    search_query = query if query != question else ""
    hits = retrieved.hits
    if _not_covered(retrieved, query=query):
        # The passages are kept with the answer (not cited): `evaluate --pages` scores them.
        return asked.answered(not_covered.reply(hits), Message.Mode.REFUSAL, hits, [])

    if not chat_available():
        if not hits:
            return asked.answered(_(prompts.NO_MATCH_REPLY), Message.Mode.REFUSAL, [], [])
        mapped = _extractive_answer(question=question, notebook=notebook, retrieved=retrieved)
        return asked.answered(mapped.text, Message.Mode.EXTRACTIVE, hits, mapped.order)

    memories = facts_to_give(user=user, notebook=notebook)
    hits, messages = _prompt(
        notebook=notebook,
        question=question,
        history=history,
        hits=hits,
        ready=ready,
        memories=memories,
        standalone=search_query,
    )
    return _Prepared(
        notebook,
        conversation,
        question,
        hits,
        messages,
        user,
        search_query=search_query,
        chosen_sources=chosen_sources,
        retrieved=retrieved,
        memories=memories,
    )


def _search(
    *,
    user: User,
    notebook: Notebook,
    question: str,
    history: Sequence[Turn],
    source: Source | None,
    chosen_sources: Sequence[int] | None,
) -> tuple[str, Retrieved]:
    """The passages for the question, and the query that found them: a follow-up may be
    rewritten to stand alone for the search (RETRIEVAL_QUERY_REWRITE); the answer's prompt
    keeps the question as asked, with the turns."""
    query = standalone_query(question=question, turns=history, user=user)
    # A follow-up may lean on the earlier turns ("And how long did it last?"), which a chat
    # model reads and the search does not: there the model judges (NOT_IN_SOURCES). Asking
    # about one source has no floor either (retrieval/services.py): a word's rarity within
    # one document says little, and the asker chose that document.
    judged = source is None and not (history and chat_available())
    retrieved = retrieve_assessed(
        user=user,
        notebook=notebook,
        question=query,
        source=source,
        sources=chosen_sources,
        assess=judged,
    )
    return query, retrieved


def _not_covered(retrieved: Retrieved, *, query: str) -> bool:
    """Whether the search found passages that do not cover the question (logged, with why)."""
    coverage = retrieved.coverage
    if not retrieved.hits or coverage is None or coverage.covered:
        return False
    logger.info(
        "Not covered (best similarity %s, word share %.2f): %r",
        coverage.similarity,
        coverage.words,
        query,
    )
    return True


def _sources_asked(
    *,
    notebook: Notebook,
    notebook_sources: Sequence[Source] | None,
    chosen_sources: Sequence[int] | None,
    source: Source | None,
) -> list[Source]:
    """The notebook's sources a question may be answered from: those ticked, or the one it
    is about; a question with none ticked, or about a source not here, is refused."""
    sources = list(
        access.notebook_sources(notebook) if notebook_sources is None else notebook_sources
    )
    if chosen_sources is not None:
        if not chosen_sources:
            raise QuestionRefused(_("No source is ticked: tick at least one source to ask about."))
        sources = [linked for linked in sources if linked.pk in set(chosen_sources)]
    if source is not None:
        sources = [linked for linked in sources if linked.pk == source.pk]
        if not sources:
            raise QuestionRefused(_("That source is not in this notebook."))
    return sources


def _extractive_answer(*, question: str, notebook: Notebook, retrieved: Retrieved) -> MappedAnswer:
    """The answer without a chat model: the passages' own sentences, with their markers."""
    hits = retrieved.hits
    closeness = part_closeness(
        hits=hits, query_vector=retrieved.query_vector, model=retrieved.model
    )
    text = extractive.answer(
        question,
        extractive_passages(hits, closeness=closeness),
        limit=chat_style.extractive_sentences(notebook),
    )
    return map_markers(text, len(hits))
