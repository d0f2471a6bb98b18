"""The analytics pages: a notebook's questions (its owner and editors) and the site's
(staff), over the last 7, 30 or 90 days."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.db.models import QuerySet
from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.utils.formats import date_format
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from analytics.charts import bar_chart
from analytics.figures import Figures, figures
from analytics.forms import PERIODS, PeriodForm
from analytics.models import QuestionLog
from sharing.models import Role
from web.notebook_pages import HtmxHttpRequest, get_notebook_for_user


def _context(logs: QuerySet[QuestionLog], days: int) -> dict[str, Any]:
    shown = figures(logs, days=days)
    every = 1 if days <= 7 else 7 if days <= 30 else 14
    return {
        "figures": shown,
        "days": days,
        "periods": PERIODS,
        "asked_chart": bar_chart(
            [
                (
                    date_format(day.day, "M j"),
                    day.asked,
                    day.refused,
                    _("%(day)s: %(asked)s asked, %(refused)s refused")
                    % {"day": date_format(day.day), "asked": day.asked, "refused": day.refused},
                )
                for day in shown.days
            ],
            label_every=every,
        ),
        "time_chart": bar_chart(
            [
                (
                    date_format(day.day, "M j"),
                    round((day.total_p95_ms or 0) / 1000, 1),
                    0,
                    _("%(day)s: 95%% of answers within %(seconds)s s")
                    % {
                        "day": date_format(day.day),
                        "seconds": round((day.total_p95_ms or 0) / 1000, 1),
                    },
                )
                for day in shown.days
            ],
            unit=" s",
            label_every=every,
        ),
        "steps": _steps(shown),
        "question_log_days": settings.QUESTION_LOG_DAYS,
    }


def _steps(shown: Figures) -> list[tuple[str, float | None, float | None]]:
    names = {
        "retrieval_ms": _("Search done"),
        "first_word_ms": _("First word"),
        "total_ms": _("Answer stored"),
    }
    return [(names[step], *shown.percentiles[step]) for step in names]


@login_required
@require_GET
def notebook_page(request: HtmxHttpRequest, notebook_id: int) -> HttpResponse:
    # The owner's and the editors': who may ask there sees what was asked.
    notebook = get_notebook_for_user(request, notebook_id, Role.EDITOR)
    days = PeriodForm(request.GET).period()
    context = _context(QuestionLog.objects.filter(notebook=notebook), days)
    context["notebook"] = notebook
    return render(request, "analytics/page.html", context)


@login_required
@require_GET
def site_page(request: HtmxHttpRequest) -> HttpResponse:
    if not request.user.is_staff:
        raise Http404("No such page.")
    days = PeriodForm(request.GET).period()
    return render(request, "analytics/page.html", _context(QuestionLog.objects.all(), days))
