"""The figures of a question log (one notebook's, or the site's) over the last days: per
day, the times' percentiles, the rates, what was not answered, what was cited. A handful of
SQL statements, whatever the log's size."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal
from typing import Any

from django.db.models import Aggregate, Count, FloatField, Max, Q, QuerySet, Sum
from django.db.models.functions import TruncDate
from django.utils import timezone

from analytics.models import QuestionLog
from library.models import Source


class Percentile(Aggregate):
    """PostgreSQL's percentile_cont: the value below which `fraction` of the rows fall."""

    function = "percentile_cont"
    template = "%(function)s(%(fraction)s) WITHIN GROUP (ORDER BY %(expressions)s)"
    output_field = FloatField()

    def __init__(self, expression: str, fraction: float, **extra: Any) -> None:
        super().__init__(expression, fraction=fraction, **extra)


@dataclass(frozen=True)
class Day:
    day: date
    asked: int
    refused: int
    total_p95_ms: float | None


@dataclass(frozen=True)
class Figures:
    days: list[Day]  # every day of the period, oldest first, empty days included
    asked: int
    refused: int
    citations: int
    unsupported: int
    percentiles: dict[str, tuple[float | None, float | None]]  # step: (p50, p95) in ms
    tokens: int
    cost: Decimal
    unanswered: list[tuple[str, int]]  # refused questions, most asked first
    top_sources: list[tuple[str, int]]  # (title, answers citing it), most cited first

    @property
    def refusal_rate(self) -> float | None:
        return self.refused / self.asked if self.asked else None

    @property
    def unsupported_rate(self) -> float | None:
        return self.unsupported / self.citations if self.citations else None


STEPS = ("retrieval_ms", "first_word_ms", "total_ms")


def figures(logs: QuerySet[QuestionLog], *, days: int) -> Figures:
    today = timezone.localdate()
    first = today - timedelta(days=days - 1)
    logs = logs.filter(created_at__date__gte=first)
    percentiles = {
        f"{step}_{name}": Percentile(step, fraction)
        for step in STEPS
        for name, fraction in (("p50", 0.5), ("p95", 0.95))
    }
    whole = logs.aggregate(
        asked=Count("id"),
        refused=Count("id", filter=Q(refused=True)),
        citations=Sum("citations"),
        supported=Sum("supported_citations"),
        input=Sum("input_tokens"),
        output=Sum("output_tokens"),
        cost=Sum("cost"),
        **percentiles,
    )
    per_day = {
        row["day"]: row
        for row in logs.annotate(day=TruncDate("created_at"))
        .values("day")
        .annotate(
            asked=Count("id"),
            refused=Count("id", filter=Q(refused=True)),
            total_p95=Percentile("total_ms", 0.95),
        )
    }
    calendar = [first + timedelta(days=offset) for offset in range(days)]
    unanswered = (
        logs.filter(refused=True)
        .values("question")
        .annotate(times=Count("id"), last=Max("created_at"))
        .order_by("-times", "-last")[:20]
    )
    cited: Counter[int] = Counter()
    for source_ids in logs.exclude(cited_source_ids=[]).values_list("cited_source_ids", flat=True):
        cited.update(source_ids)
    titles = dict(
        Source.objects.filter(pk__in=[pk for pk, _n in cited.most_common(10)]).values_list(
            "pk", "title"
        )
    )
    citations = whole["citations"] or 0
    return Figures(
        days=[
            Day(
                day=day,
                asked=per_day[day]["asked"] if day in per_day else 0,
                refused=per_day[day]["refused"] if day in per_day else 0,
                total_p95_ms=per_day[day]["total_p95"] if day in per_day else None,
            )
            for day in calendar
        ],
        asked=whole["asked"],
        refused=whole["refused"],
        citations=citations,
        unsupported=citations - (whole["supported"] or 0),
        percentiles={step: (whole[f"{step}_p50"], whole[f"{step}_p95"]) for step in STEPS},
        tokens=(whole["input"] or 0) + (whole["output"] or 0),
        cost=whole["cost"] or Decimal(0),
        unanswered=[(row["question"], row["times"]) for row in unanswered],
        top_sources=[
            (titles.get(pk, ""), count) for pk, count in cited.most_common(10) if pk in titles
        ],
    )
