"""An answer stored: the question, the reply and its verified citations, in one
transaction."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from django.contrib.auth.models import User
from django.db import transaction

from citations.verification import verified_citations
from notebooks.models import Citation, Conversation, Message, Notebook
from retrieval.search import Hit


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
