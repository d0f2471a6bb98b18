"""Answering a question in a notebook with citations the reader can check."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction

from billing.services import require_credit, usage_for
from generation import extractive, prompts
from generation.citations import map_markers
from generation.verification import verify_citations
from library.models import Source
from notebooks.models import Citation, Conversation, Message, Notebook
from providers.chat import chat, chat_available
from providers.tokens import estimate_tokens
from retrieval.search import Hit
from retrieval.services import retrieve


@dataclass(frozen=True)
class Answer:
    conversation: Conversation
    question: Message
    message: Message
    citations: list[Citation]


def answer_question(
    *,
    user: User,
    notebook: Notebook,
    question: str,
    conversation: Conversation | None = None,
    source: Source | None = None,
) -> Answer:
    """Answer a question at the user's expense: refused (CreditSpent) once the credit is
    spent; the usage rows of its model calls point at the notebook and the answer.

    With `source` (one of the notebook's), only that source is searched ("Ask about this").
    """
    require_credit(user)
    with usage_for(notebook_id=notebook.pk) as billed:
        answer = _answer_question(
            user=user,
            notebook=notebook,
            question=question,
            conversation=conversation,
            source=source,
        )
    billed.attach(message_id=answer.message.pk)
    return answer


def _answer_question(
    *,
    user: User,
    notebook: Notebook,
    question: str,
    conversation: Conversation | None = None,
    source: Source | None = None,
) -> Answer:
    """Answer from the notebook's sources and store the question, answer and citations.

    Nothing is stored until the answer exists: a failed model call leaves no unanswered
    question behind (and no empty new conversation).
    """
    question = question.strip()
    if not question:
        raise ValueError("The question is empty.")
    history = _history(conversation)

    def store(text: str, mode: str, hits: list[Hit], order: list[int], model: str = "") -> Answer:
        return _store(notebook, conversation, question, text, mode, hits, order, model)

    sources = list(notebook.sources.all())
    if source is not None:
        sources = [linked for linked in sources if linked.pk == source.pk]
        if not sources:
            raise ValueError("That source is not in this notebook.")
    if not sources:
        return store(prompts.EMPTY_NOTEBOOK_REPLY, Message.Mode.REFUSAL, [], [])
    ready = [source for source in sources if source.status == Source.Status.READY]
    if not ready:
        return store(prompts.NOTHING_READY_REPLY, Message.Mode.REFUSAL, [], [])

    hits = retrieve(user=user, notebook=notebook, question=question, source=source)

    if not chat_available():
        if not hits:
            return store(prompts.NO_MATCH_REPLY, Message.Mode.REFUSAL, [], [])
        text = extractive.answer(
            question, [hit.chunk.text for hit in hits], [hit.similarity for hit in hits]
        )
        mapped = map_markers(text, len(hits))
        return store(mapped.text, Message.Mode.EXTRACTIVE, hits, mapped.order)

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
    return store(mapped.text, Message.Mode.LLM, hits, mapped.order, reply.model)


def _history(conversation: Conversation | None) -> list[Message]:
    """The conversation's latest turns, oldest first, as many as fit CHAT_HISTORY_TOKENS
    counted from the newest: the most recent context matters most to a follow-up."""
    if conversation is None:
        return []
    budget = settings.CHAT_HISTORY_TOKENS
    kept: list[Message] = []
    for turn in conversation.messages.order_by("-created_at", "-id").iterator():
        budget -= estimate_tokens(turn.content)
        if budget < 0:
            break
        kept.append(turn)
    return kept[::-1]


def _store(
    notebook: Notebook,
    conversation: Conversation | None,
    question: str,
    text: str,
    mode: str,
    hits: list[Hit],
    order: list[int],
    model: str,
) -> Answer:
    with transaction.atomic():
        if conversation is None:
            conversation = Conversation.objects.create(notebook=notebook)
        asked = Message.objects.create(
            conversation=conversation, role=Message.Role.USER, content=question
        )
        message = Message.objects.create(
            conversation=conversation,
            role=Message.Role.ASSISTANT,
            content=text,
            mode=mode,
            model=model,
        )
        cited = {n: hits[number - 1] for n, number in enumerate(order, start=1)}
        supports = verify_citations(text, {n: hit.chunk.text for n, hit in cited.items()})
        citations = Citation.objects.bulk_create(
            Citation(
                message=message,
                n=n,
                chunk=hit.chunk,
                source=hit.chunk.source,
                source_title=hit.chunk.source.title,
                page=hit.chunk.page,
                quote=supports[n].quote,
                similarity=round(hit.similarity, 4),
                supported=supports[n].supported,
                support_score=supports[n].score,
            )
            for n, hit in cited.items()
        )
    return Answer(conversation=conversation, question=asked, message=message, citations=citations)
