"""The question log: one row per answered question, written once the answer is stored and
its model calls billed (generation/answering/); deleted after QUESTION_LOG_DAYS, or for
one person on request."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.db.models import Sum
from django.utils import timezone

from analytics.models import QuestionLog
from billing.models import Usage
from notebooks.models import Citation, Message, Notebook


@dataclass
class Timing:
    """When a question's steps ended, from its arrival (monotonic seconds)."""

    started: float = field(default_factory=time.monotonic)
    retrieved: float | None = None
    first_word: float | None = None

    def mark_retrieved(self) -> None:
        self.retrieved = time.monotonic()

    def mark_first_word(self) -> None:
        if self.first_word is None:
            self.first_word = time.monotonic()

    def ms(self, at: float | None) -> int | None:
        return None if at is None else round((at - self.started) * 1000)


def log_question(
    *,
    user: User,
    notebook: Notebook,
    question: Message,
    answer: Message,
    citations: list[Citation],
    timing: Timing,
) -> QuestionLog | None:
    """Log an answered question; a memory command is no question and is not logged."""
    if answer.mode == Message.Mode.COMMAND:
        return None
    total = time.monotonic()
    spent = Usage.objects.filter(message=answer).aggregate(
        input=Sum("input_tokens"), output=Sum("output_tokens"), cost=Sum("cost")
    )
    cited: list[int] = []
    for citation in citations:
        if citation.source_id is not None and citation.source_id not in cited:
            cited.append(citation.source_id)
    return QuestionLog.objects.create(
        notebook=notebook,
        user=user,
        message=answer,
        question=question.content,
        search_query=question.search_query,
        mode=answer.mode,
        model=answer.model,
        refused=answer.mode == Message.Mode.REFUSAL,
        retrieval_ms=timing.ms(timing.retrieved),
        # An answer written at once (a refusal, an extractive one) shows whole when stored.
        first_word_ms=timing.ms(timing.first_word or total),
        total_ms=timing.ms(total) or 0,
        input_tokens=spent["input"] or 0,
        output_tokens=spent["output"] or 0,
        cost=spent["cost"] or 0,
        citations=len(citations),
        supported_citations=sum(1 for citation in citations if citation.supported),
        cited_source_ids=cited,
    )


def delete_expired_logs() -> int:
    """Delete the log rows older than QUESTION_LOG_DAYS; how many."""
    cutoff = timezone.now() - timedelta(days=settings.QUESTION_LOG_DAYS)
    deleted, _by_model = QuestionLog.objects.filter(created_at__lt=cutoff).delete()
    return deleted


def delete_user_log(*, user: User) -> int:
    """Delete every logged question of one person (their conversations stay); how many."""
    deleted, _by_model = QuestionLog.objects.filter(user=user).delete()
    return deleted
