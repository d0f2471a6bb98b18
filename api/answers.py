"""Asking a notebook for the API, the OpenAI-compatible endpoint and the MCP server alike:
the same gate, the same answering service as the chat page, and the streamed answer's
items relayed from the request's thread to the event loop."""

from __future__ import annotations

from collections.abc import AsyncIterator, Generator
from typing import Any

from asgiref.sync import sync_to_async
from django.contrib.auth.models import User
from django.shortcuts import get_object_or_404

from generation.answering import Answer, Evidence, Turn, answer_question, stream_answer
from library.models import Source
from notebooks.models import Conversation, Notebook
from retrieval.chosen_sources import sources_to_ask
from retrieval.search import Hit
from sharing import access

Item = str | Answer | Evidence


def conversation_and_source(
    user: User, notebook: Notebook, conversation_id: int | None, source_id: int | None
) -> tuple[Conversation | None, Source | None]:
    """The caller's own conversation to continue and the one source to ask, each 404 when
    it is not theirs to use there."""
    conversation = None
    if conversation_id is not None:
        conversation = get_object_or_404(
            access.own_conversations(user, notebook), pk=conversation_id
        )
    source = None
    if source_id is not None:
        source = get_object_or_404(access.notebook_sources(notebook), pk=source_id)
    return conversation, source


def ask(
    *,
    user: User,
    notebook: Notebook,
    question: str,
    conversation: Conversation | None = None,
    source: Source | None = None,
    turns: list[Turn] | None = None,
) -> Answer:
    asked = sources_to_ask(user=user, notebook=notebook)
    return answer_question(
        user=user,
        notebook=notebook,
        question=question,
        conversation=conversation,
        source=source,
        chosen_sources=None if source is not None else asked.searched,
        credit_checked=True,
        notebook_sources=asked.sources,
        turns=turns,
    )


def ask_streamed(
    *,
    user: User,
    notebook: Notebook,
    question: str,
    conversation: Conversation | None = None,
    source: Source | None = None,
    turns: list[Turn] | None = None,
) -> Generator[Item, None, None]:
    asked = sources_to_ask(user=user, notebook=notebook)
    return stream_answer(
        user=user,
        notebook=notebook,
        question=question,
        conversation=conversation,
        source=source,
        chosen_sources=None if source is not None else asked.searched,
        credit_checked=True,
        notebook_sources=asked.sources,
        evidence=True,
        turns=turns,
    )


def _next_or_none(items: Generator[Item, None, None]) -> Item | None:
    # StopIteration cannot travel through sync_to_async's future.
    return next(items, None)


async def relay(items: Generator[Item, None, None]) -> AsyncIterator[Item]:
    """The generator's items on the event loop, each step in the request's thread (it does
    database work); closing this closes it, which stores nothing (stream_answer)."""
    try:
        while (item := await sync_to_async(_next_or_none)(items)) is not None:
            yield item
    finally:
        await sync_to_async(items.close)()


def passage_out(number: int, hit: Hit) -> dict[str, Any]:
    chunk = hit.chunk
    return {
        "n": number,
        "source_id": chunk.source_id,
        "source_title": chunk.source.title,
        "page": chunk.page,
        "page_label": chunk.page_label,
        "section": [str(part) for part in chunk.section],
        "text": chunk.text,
        "similarity": hit.similarity,
    }
