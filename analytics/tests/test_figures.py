"""The figures of a log: per day, percentiles, rates, the questions not answered and the
sources cited most, over the chosen days only."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from analytics.figures import figures
from analytics.models import QuestionLog
from notebooks.tests.factories import make_source


def log(notebook, *, question="Q?", refused=False, total=1000, days_ago=0, cited=(), **extra):
    row = QuestionLog.objects.create(
        notebook=notebook,
        user=notebook.owner,
        question=question,
        mode="refusal" if refused else "llm",
        refused=refused,
        retrieval_ms=total // 10,
        first_word_ms=total // 2,
        total_ms=total,
        cited_source_ids=list(cited),
        **extra,
    )
    if days_ago:
        QuestionLog.objects.filter(pk=row.pk).update(
            created_at=timezone.now() - timedelta(days=days_ago)
        )
    return row


def test_figures_of_a_notebooks_log(owner, notebook):
    herons = make_source(owner=owner, notebook=notebook, title="Herons")
    trains = make_source(owner=owner, notebook=notebook, title="Trains")
    for total in range(100, 2100, 100):  # 20 answers, 100 ms to 2000 ms
        log(notebook, total=total, cited=[herons.pk], citations=2, supported_citations=1)
    log(notebook, cited=[trains.pk, herons.pk], citations=1, supported_citations=1, days_ago=2)
    log(notebook, question="What about otters?", refused=True, days_ago=1)
    log(notebook, question="What about otters?", refused=True)
    log(notebook, question="And owls?", refused=True)
    log(notebook, question="Long ago", refused=True, days_ago=40)  # outside the period

    shown = figures(QuestionLog.objects.filter(notebook=notebook), days=30)

    assert shown.asked == 24 and shown.refused == 3
    assert shown.refusal_rate == 3 / 24
    assert (shown.citations, shown.unsupported) == (41, 20)
    p50, p95 = shown.percentiles["total_ms"]
    assert 1000 <= p50 <= 1100 and 1800 <= p95 <= 2000
    assert len(shown.days) == 30 and shown.days[-1].day == timezone.localdate()
    assert (shown.days[-1].asked, shown.days[-1].refused) == (22, 2)
    assert (shown.days[-2].asked, shown.days[-3].asked, shown.days[0].asked) == (1, 1, 0)
    assert shown.unanswered == [("What about otters?", 2), ("And owls?", 1)]
    assert shown.top_sources == [("Herons", 21), ("Trains", 1)]


def test_an_empty_log_has_no_rates(notebook):
    shown = figures(QuestionLog.objects.filter(notebook=notebook), days=7)

    assert shown.asked == 0 and shown.refusal_rate is None and shown.unsupported_rate is None
    assert shown.percentiles["total_ms"] == (None, None)
    assert [day.asked for day in shown.days] == [0] * 7
