"""The prompt an answer is asked with: the passages that fit the model's context, the
conversation's latest turns, the asker's facts; and the passages an extractive answer quotes."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from django.conf import settings

from generation import chat_style, extractive, prompts
from generation.focus import focused
from language.tokens import estimate_tokens
from library.models import Source
from memory import commands as memory_commands
from notebooks.models import Conversation, Message, Notebook
from retrieval.search import CAPPED_KINDS, Hit

logger = logging.getLogger(__name__)


# An earlier turn of a conversation: (role, text), the role "user" or "assistant".
Turn = tuple[str, str]


def _prompt(
    *,
    notebook: Notebook,
    question: str,
    history: Sequence[Turn],
    hits: list[Hit],
    ready: Sequence[Source],
    memories: list[str],
    standalone: str = "",
) -> tuple[list[Hit], list[dict[str, str]]]:
    """The chat model's messages: the notebook's system prompt (with the asker's facts), the
    earlier turns, then the question with the passages that fit; and those passages' hits.
    `standalone`: the question rewritten to stand alone, when it was."""
    # The documents the passages come from first: the list names only the first few.
    given = {hit.chunk.source_id: rank for rank, hit in reversed(list(enumerate(hits)))}
    listed = sorted(ready, key=lambda source: given.get(source.pk, len(hits)))
    documents = [(source.get_kind_display(), source.title) for source in listed]
    system = chat_style.system_prompt(notebook)
    if memories:
        system += "\n\n" + prompts.memory_section(memories)
    messages = [{"role": "system", "content": system}]
    messages += [{"role": role, "content": content} for role, content in history]
    hits, passages = _fit_context(
        hits, messages, question=question, documents=documents, standalone=standalone
    )
    user_prompt = prompts.build_user_prompt(
        question=question, documents=documents, passages=passages, standalone=standalone
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
    standalone: str = "",
) -> tuple[list[Hit], list[tuple[str, int | None, str]]]:
    """The best-ranked hits whose passages fit CHAT_CONTEXT_TOKENS beside the system prompt,
    the turns, the rest of the prompt and CHAT_ANSWER_TOKENS for the reply: a server whose
    context is full cuts the prompt (llama.cpp drops its start) or refuses it. With them,
    the passages as the prompt gives them (title, page, text): each cut to the part that
    matches the question when CHAT_PASSAGE_TOKENS asks for it (generation/focus.py)."""
    fixed = estimate_tokens(
        *(message["content"] for message in messages),
        prompts.build_user_prompt(question=question, documents=documents, passages=[]),
        prompts.citation_reminder(question, standalone=standalone),  # comes with passages
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
