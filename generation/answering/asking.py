"""Asking: a question answered at once or streamed, at the asker's expense, logged."""

from __future__ import annotations

from collections.abc import Generator, Sequence
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.models import User
from django.db import connection

from analytics.services import Timing, log_question
from billing.models import Usage
from billing.services import deferred_usage, require_credit, usage_for
from citations.verification import best_support
from generation.answering.preparing import _prepare
from generation.answering.prompt import Turn
from generation.answering.storing import Answer
from generation.citations import loops
from library.models import Source
from notebooks.models import Conversation, Notebook
from providers.chat import chat_stream
from retrieval.search import Hit


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
            if loops(stream.text):
                break  # the rest would be more copies
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
            if loops(stream.text):
                break  # the rest would be more copies
    finally:
        stream.close()
    return prepared.store_reply(stream.text, stream.model)
