from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from billing.models import CreditEntry, Usage
from billing.services import balance, usage_summary, usage_totals


class AuthenticatedRequest(HttpRequest):
    user: User  # every view here is @login_required


@login_required
@require_GET
def usage(request: AuthenticatedRequest) -> HttpResponse:
    """The signed-in user's balance, usage per day, kind and model, and credit received."""
    user = request.user
    rows = usage_summary(user=user)
    for row in rows:
        # The kind's name in the reader's language ("stt" is Speech to text).
        kind = row["kind"]
        row["kind_label"] = Usage.Kind(kind).label if kind in Usage.Kind.values else kind
    context = {
        "balance": balance(user),
        "rows": rows,
        "totals": usage_totals(user=user),
        "grants": CreditEntry.objects.filter(user=user).exclude(kind=CreditEntry.Kind.DEBIT)[:50],
    }
    return render(request, "billing/usage.html", context)
