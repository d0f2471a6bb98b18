"""Answering a question in a notebook with citations the reader can check."""

from __future__ import annotations

import logging
from collections.abc import Generator, Sequence
from dataclasses import dataclass, field, replace

from django.conf import settings
from django.contrib.auth.models import User
from django.db import connection, transaction
from django.utils.translation import gettext as _

from analytics.services import Timing, log_question
from billing.models import Usage
from billing.services import deferred_usage, require_credit, usage_for
from citations.verification import best_support, verified_citations
from generation import chat_style, extractive, not_covered, prompts
from generation.citations import (
    MappedAnswer,
    attribute_sentences,
    hollow,
    map_markers,
    move_opening_markers,
)
from generation.focus import focused
from generation.rewrite import standalone_query
from language.tokens import estimate_tokens
from library.models import Source
from memory import commands as memory_commands
from memory.services import facts_to_give
from notebooks.models import Citation, Conversation, Message, Notebook
from providers.chat import chat_available, chat_stream
from retrieval.closeness import part_closeness
from retrieval.search import CAPPED_KINDS, Hit
from retrieval.services import Retrieved, retrieve_assessed
from sharing import access
from texts.errors import UserFacingError

logger = logging.getLogger(__name__)


# An earlier turn of a conversation: (role, text), the role "user" or "assistant".
Turn = tuple[str, str]


class QuestionRefused(UserFacingError):
    """The question cannot be asked as it is: empty, or about no source of the notebook."""


@dataclass(frozen=True)
class Answer:
    conversation: Conversation
    question: Message
    message: Message
    citations: list[Citation]
    # The passages retrieved for it, best first (what `manage.py evaluate --pages` scores);
    # not stored: the citations keep what the answer used.
    passages: list[Hit] = field(default_factory=list)

    @property
    def search_query(self) -> str:
        """What the search looked for: the rewritten follow-up, else the question."""
        return self.question.search_query or self.question.content


@dataclass(frozen=True)
class Evidence:
    """The passages an answer is written from, best first, sent before its first word."""

    hits: list[Hit]
    question: str

    @property
    def passages(self) -> list[dict[str, object]]:
        """Each passage's number in the prompt, source, page and the sentence that best
        matches the question: what a reader is shown while the model writes."""
        return [
            {
                "n": number,
                "source": hit.chunk.source.title,
                "page": hit.chunk.page,
                "sentence": best_support(self.question, hit.chunk.text).quote,
            }
            for number, hit in enumerate(self.hits, start=1)
        ]


def answer_question(
    *,
    user: User,
    notebook: Notebook,
    question: str,
    conversation: Conversation | None = None,
    source: Source | None = None,
    chosen_sources: Sequence[int] | None = None,
    credit_checked: bool = False,
    notebook_sources: Sequence[Source] | None = None,
    turns: Sequence[Turn] | None = None,
) -> Answer:
    """Answer a question at the user's expense: refused (CreditSpent) once the credit is
    spent; the usage rows of its model calls point at the notebook and the answer.

    With `source` (one of the notebook's), only that source is searched ("Ask about this");
    with `chosen_sources` (ids), only those (the sources the asker ticked; None: all).
    `credit_checked`: the caller has just checked the credit (a view's @credit_required),
    so it is not summed a second time before the model calls. `notebook_sources`: the
    notebook's sources, read by the caller a moment ago with the asker's choice of them
    (retrieval.chosen_sources.sources_to_ask), so they are not read a second time; None:
    read here. `turns`: the earlier turns ((role, text), oldest first) as a client that
    holds the conversation itself sends them (the OpenAI chat API does); they are the
    history instead of the stored conversation's, for the rewrite and the prompt alike.
    """
    if not credit_checked:
        require_credit(user)
    timing = Timing()
    with usage_for(notebook_id=notebook.pk) as billed:
        answer = _answer_question(
            user=user,
            notebook=notebook,
            question=question,
            conversation=conversation,
            source=source,
            chosen_sources=chosen_sources,
            notebook_sources=notebook_sources,
            timing=timing,
            turns=turns,
        )
    billed.attach(message_id=answer.message.pk)
    _log(answer, user=user, notebook=notebook, timing=timing)
    return answer


def _log(answer: Answer, *, user: User, notebook: Notebook, timing: Timing) -> None:
    log_question(
        user=user,
        notebook=notebook,
        question=answer.question,
        answer=answer.message,
        citations=answer.citations,
        timing=timing,
    )


def stream_answer(
    *,
    user: User,
    notebook: Notebook,
    question: str,
    conversation: Conversation | None = None,
    source: Source | None = None,
    chosen_sources: Sequence[int] | None = None,
    credit_checked: bool = False,
    notebook_sources: Sequence[Source] | None = None,
    evidence: bool = False,
    turns: Sequence[Turn] | None = None,
) -> Generator[str | Evidence | Answer, None, None]:
    """answer_question, streamed: yields the passages the model is given (Evidence), then
    the model's text as it is written, then the stored Answer (its text mapped and its
    citations verified, which the deltas are not yet).

    A refusal or an extractive answer needs no model call: its whole text comes at once.
    Errors are raised as by answer_question, before the first delta or while streaming.

    A reader that stops before the end (closes this generator: the person pressed Stop or
    left the page) gets nothing stored, neither the question nor the partial answer: Stop
    means "not this answer", the question is still in the form to be asked again, and a
    truncated answer would sit in the conversation, and go to the model as history, as if it
    were complete. The usage row is still written (the provider billed the tokens), pointing
    at the notebook. `credit_checked`, `notebook_sources` and `turns` as for answer_question.
    With `evidence`, an answer written without a model (a refusal, an extractive answer)
    yields its passages first too.
    """
    if not credit_checked:
        require_credit(user)
    # usage_for sets a context variable, which must not stay set across a yield: the
    # reader may advance this generator from another context (sync_to_async does).
    # The question's embedding (and rewrite) are billed once the chat request has gone out,
    # while the model thinks (deferred_usage): their rows are not on the way to its first token.
    timing = Timing()
    with usage_for(notebook_id=notebook.pk) as billed, deferred_usage():
        prepared = _prepare(
            user=user,
            notebook=notebook,
            question=question,
            conversation=conversation,
            source=source,
            chosen_sources=chosen_sources,
            notebook_sources=notebook_sources,
            timing=timing,
            turns=turns,
        )
        stream = (
            None
            if prepared.answer
            else chat_stream(prepared.messages, user=user, max_tokens=settings.CHAT_ANSWER_TOKENS)
        )
    passages = Evidence(hits=prepared.hits, question=prepared.question)
    if stream is None:
        if evidence:
            yield passages
        assert prepared.answer is not None
        billed.attach(message_id=prepared.answer.message.pk)
        _log(prepared.answer, user=user, notebook=notebook, timing=timing)
        yield prepared.answer.message.content
        yield prepared.answer
        return
    # What the answer will be written from, while the model reads its prompt.
    yield passages
    _release_connection()
    try:
        for delta in stream:
            timing.mark_first_word()
            yield delta
    finally:
        stream.close()  # writes the usage row now if the reader stopped early
        if stream.usage is not None:
            Usage.objects.filter(pk=stream.usage.pk).update(notebook_id=notebook.pk)
    answer = prepared.store_reply(stream.text, stream.model)
    assert stream.usage is not None  # written when the stream ended
    billed.usage_ids.append(stream.usage.pk)
    billed.attach(message_id=answer.message.pk)
    _log(answer, user=user, notebook=notebook, timing=timing)
    yield answer


def _release_connection() -> None:
    """Give the database connection back (to the pool) while the model writes: an answer
    waits seconds on it, and each answer holding a connection that long would cap the
    answers streaming at once at the pool's size (bench/load.py). The next query takes one
    again. Inside a transaction (a test's) the connection must stay."""
    if not connection.in_atomic_block:
        connection.close()


def _answer_question(
    *,
    user: User,
    notebook: Notebook,
    question: str,
    conversation: Conversation | None = None,
    source: Source | None = None,
    chosen_sources: Sequence[int] | None = None,
    notebook_sources: Sequence[Source] | None = None,
    timing: Timing | None = None,
    turns: Sequence[Turn] | None = None,
) -> Answer:
    """Answer from the notebook's sources and store the question, answer and citations.

    Nothing is stored until the answer exists: a failed model call leaves no unanswered
    question behind (and no empty new conversation).
    """
    prepared = _prepare(
        user=user,
        notebook=notebook,
        question=question,
        conversation=conversation,
        source=source,
        chosen_sources=chosen_sources,
        notebook_sources=notebook_sources,
        timing=timing,
        turns=turns,
    )
    if prepared.answer is not None:
        return prepared.answer
    # The reply gets the room _fit_context kept for it, and no more: a small model left
    # to run on fills the server's whole context. Streamed, though nobody reads it as it
    # comes, so the waits are the answer's (to the first word, then between words), not a
    # total that a long answer from a slow server would run out of.
    stream = chat_stream(prepared.messages, user=user, max_tokens=settings.CHAT_ANSWER_TOKENS)
    try:
        for _delta in stream:
            if timing is not None:
                timing.mark_first_word()
    finally:
        stream.close()
    return prepared.store_reply(stream.text, stream.model)


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
        text = move_opening_markers(text)
        attribution = attribute_sentences(text, [hit.chunk.text for hit in self.hits])
        mapped = map_markers(attribution.text, len(self.hits))
        if hollow(mapped.text) and self.hits:
            # A small model may write nothing but markers ("[1][2] [1][3]"): no answer to
            # show, so the passages' own sentences are, labelled as quotes.
            logger.warning("The chat model wrote no words, only %r; quoting instead", text[:80])
            return self._quoted(model)
        return self._stored(
            mapped.text,
            Message.Mode.LLM,
            mapped.order,
            model,
            attributed={mapped.order.index(number) + 1 for number in attribution.attributed},
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

    def _quoted(self, model: str) -> Answer:
        closeness: Sequence[tuple[float, ...]] = ()
        if self.retrieved is not None:
            closeness = part_closeness(
                hits=self.hits,
                query_vector=self.retrieved.query_vector,
                model=self.retrieved.model,
            )
        text = extractive.answer(
            self.question,
            extractive_passages(self.hits, closeness=closeness),
            limit=chat_style.extractive_sentences(self.notebook),
        )
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


def _prompt(
    *,
    notebook: Notebook,
    question: str,
    history: Sequence[Turn],
    hits: list[Hit],
    ready: Sequence[Source],
    memories: list[str],
) -> tuple[list[Hit], list[dict[str, str]]]:
    """The chat model's messages: the notebook's system prompt (with the asker's facts), the
    earlier turns, then the question with the passages that fit; and those passages' hits."""
    documents = [(source.get_kind_display(), source.title) for source in ready]
    system = chat_style.system_prompt(notebook)
    if memories:
        system += "\n\n" + prompts.memory_section(memories)
    messages = [{"role": "system", "content": system}]
    messages += [{"role": role, "content": content} for role, content in history]
    hits, passages = _fit_context(hits, messages, question=question, documents=documents)
    user_prompt = prompts.build_user_prompt(
        question=question, documents=documents, passages=passages
    )
    messages.append({"role": "user", "content": user_prompt})
    return hits, messages


def extractive_passages(
    hits: list[Hit], *, closeness: Sequence[tuple[float, ...]] = ()
) -> list[extractive.Passage]:
    """The hits as the extractive answerer reads them: with their section paths, their
    places in their documents and, when given, the question's closeness to each of their
    parts (retrieval/closeness.py)."""
    return [
        extractive.Passage(
            text=hit.chunk.text,
            section=tuple(hit.chunk.section),
            document=hit.chunk.source_id,
            page=hit.chunk.page or 0,
            start=hit.chunk.char_start,
            restates=hit.chunk.source.kind in CAPPED_KINDS,
            closeness=closeness[number] if closeness else (),
            part_words=settings.RETRIEVAL_WINDOW_WORDS,
        )
        for number, hit in enumerate(hits)
    ]


def _fit_context(
    hits: list[Hit],
    messages: list[dict[str, str]],
    *,
    question: str,
    documents: list[tuple[str, str]],
) -> tuple[list[Hit], list[tuple[str, int | None, str]]]:
    """The best-ranked hits whose passages fit CHAT_CONTEXT_TOKENS beside the system prompt,
    the turns, the rest of the prompt and CHAT_ANSWER_TOKENS for the reply: a server whose
    context is full cuts the prompt (llama.cpp drops its start) or refuses it. With them,
    the passages as the prompt gives them (title, page, text): each cut to the part that
    matches the question when CHAT_PASSAGE_TOKENS asks for it (generation/focus.py)."""
    fixed = estimate_tokens(
        *(message["content"] for message in messages),
        prompts.build_user_prompt(question=question, documents=documents, passages=[]),
        prompts.citation_reminder(question),  # which comes with passages
    )
    budget = settings.CHAT_CONTEXT_TOKENS - settings.CHAT_ANSWER_TOKENS - fixed
    passages = [
        (
            hit.chunk.source.title,
            hit.chunk.page,
            focused(hit.chunk.text, question, settings.CHAT_PASSAGE_TOKENS),
        )
        for hit in hits
    ]
    kept = prompts.passages_that_fit(passages, budget)
    if kept < len(hits):
        logger.warning(
            "%d of %d passages left out of the prompt to fit CHAT_CONTEXT_TOKENS=%d",
            len(hits) - kept,
            len(hits),
            settings.CHAT_CONTEXT_TOKENS,
        )
    return hits[:kept], passages[:kept]


_HISTORY_SLICE = 20  # turns read at a time, newest first


def _history(conversation: Conversation | None) -> list[Turn]:
    """The conversation's latest turns, oldest first, as many as fit CHAT_HISTORY_TOKENS
    counted from the newest: the most recent context matters most to a follow-up."""
    if conversation is None:
        return []
    budget = settings.CHAT_HISTORY_TOKENS
    kept: list[Turn] = []
    newest_first = conversation.messages.order_by("-created_at", "-id")
    # Read in slices, not .iterator(): its server-side cursor costs three round trips
    # (declare, fetch, close) before the model call, and one slice holds most conversations.
    start = 0
    while True:
        turns = list(newest_first[start : start + _HISTORY_SLICE])
        for turn in turns:
            if turn.mode == Message.Mode.COMMAND or (
                turn.role == Message.Role.USER and memory_commands.parse(turn.content)
            ):
                continue  # a memory command and its reply are no context for an answer
            budget -= estimate_tokens(turn.content)
            if budget < 0:
                return kept[::-1]
            kept.append((turn.role, turn.content))
        if len(turns) < _HISTORY_SLICE:
            return kept[::-1]
        start += _HISTORY_SLICE


def _latest(turns: Sequence[Turn]) -> list[Turn]:
    """A client's turns, oldest first, as many of the newest as fit CHAT_HISTORY_TOKENS
    (as _history keeps a stored conversation's)."""
    budget = settings.CHAT_HISTORY_TOKENS
    kept: list[Turn] = []
    for role, content in reversed(turns):
        budget -= estimate_tokens(content)
        if budget < 0:
            break
        kept.append((role, content))
    return kept[::-1]


def _store(
    *,
    user: User,
    notebook: Notebook,
    conversation: Conversation | None,
    question: str,
    text: str,
    mode: str,
    hits: list[Hit],
    order: list[int],
    model: str,
    search_query: str = "",
    attributed: set[int] | None = None,
    chosen_sources: Sequence[int] | None = None,
    memories: Sequence[str] = (),
) -> Answer:
    """Store the question and the answer with its citations; `attributed`: the numbers of
    the citations Loupe placed, not the model (citations.attribute_sentences)."""
    with transaction.atomic():
        if conversation is None:
            conversation = Conversation.objects.create(notebook=notebook, user=user)
        asked = Message.objects.create(
            conversation=conversation,
            role=Message.Role.USER,
            content=question,
            search_query=search_query,
        )
        message = Message.objects.create(
            conversation=conversation,
            role=Message.Role.ASSISTANT,
            content=text,
            mode=mode,
            model=model,
            source_ids=None if chosen_sources is None else sorted(chosen_sources),
            memories=list(memories),
        )
        cited = {n: hits[number - 1] for n, number in enumerate(order, start=1)}
        citations = Citation.objects.bulk_create(
            Citation(message=message, **fields)
            for fields in verified_citations(text, cited, attributed=attributed or set())
        )
    return Answer(
        conversation=conversation,
        question=asked,
        message=message,
        citations=citations,
        passages=hits,
    )
