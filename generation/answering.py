"""Answering a question in a notebook with citations the reader can check."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from generation import extractive, prompts
from generation.citations import map_markers
from library.models import Source
from notebooks.models import Citation, Conversation, Message, Notebook
from providers.chat import chat, chat_available
from retrieval.search import Hit
from retrieval.services import retrieve

HISTORY_MESSAGES = 6  # earlier turns the LLM sees for context (they never enter the search)


@dataclass(frozen=True)
class Answer:
    conversation: Conversation
    question: Message
    message: Message
    citations: list[Citation]


def answer_question(
    *,
    user: AbstractBaseUser,
    notebook: Notebook,
    question: str,
    conversation: Conversation | None = None,
) -> Answer:
    question = question.strip()
    if not question:
        raise ValueError("The question is empty.")
    if conversation is None:
        conversation = Conversation.objects.create(notebook=notebook)
    history = list(conversation.messages.order_by("-created_at", "-id")[:HISTORY_MESSAGES])[::-1]
    asked = Message.objects.create(
        conversation=conversation, role=Message.Role.USER, content=question
    )

    sources = list(notebook.sources.all())
    if not sources:
        return _store(
            conversation, asked, prompts.EMPTY_NOTEBOOK_REPLY, Message.Mode.REFUSAL, [], []
        )
    if not any(source.status == Source.Status.READY for source in sources):
        return _store(
            conversation, asked, prompts.NOTHING_READY_REPLY, Message.Mode.REFUSAL, [], []
        )

    hits = retrieve(user=user, notebook=notebook, question=question)

    if not chat_available():
        if not hits:
            return _store(conversation, asked, prompts.NO_MATCH_REPLY, Message.Mode.REFUSAL, [], [])
        text = extractive.answer(
            question, [hit.chunk.text for hit in hits], [hit.similarity for hit in hits]
        )
        mapped = map_markers(text, len(hits))
        return _store(conversation, asked, mapped.text, Message.Mode.EXTRACTIVE, hits, mapped.order)

    ready = [source for source in sources if source.status == Source.Status.READY]
    user_prompt = prompts.build_user_prompt(
        question=question,
        documents=[(source.get_kind_display(), source.title) for source in ready],
        passages=[(hit.chunk.source.title, hit.chunk.page, hit.chunk.text) for hit in hits],
    )
    messages = [{"role": "system", "content": prompts.SYSTEM_PROMPT}]
    messages += [{"role": turn.role, "content": turn.content} for turn in history]
    messages.append({"role": "user", "content": user_prompt})
    reply = chat(messages, user=user)
    mapped = map_markers(reply.text, len(hits))
    return _store(
        conversation, asked, mapped.text, Message.Mode.LLM, hits, mapped.order, model=reply.model
    )


def _store(
    conversation: Conversation,
    asked: Message,
    text: str,
    mode: str,
    hits: list[Hit],
    order: list[int],
    *,
    model: str = "",
) -> Answer:
    with transaction.atomic():
        message = Message.objects.create(
            conversation=conversation,
            role=Message.Role.ASSISTANT,
            content=text,
            mode=mode,
            model=model,
        )
        citations = Citation.objects.bulk_create(
            Citation(
                message=message,
                n=n,
                chunk=hits[number - 1].chunk,
                source=hits[number - 1].chunk.source,
                source_title=hits[number - 1].chunk.source.title,
                page=hits[number - 1].chunk.page,
                quote=hits[number - 1].chunk.text,
                similarity=round(hits[number - 1].similarity, 4),
            )
            for n, number in enumerate(order, start=1)
        )
    return Answer(conversation=conversation, question=asked, message=message, citations=citations)
