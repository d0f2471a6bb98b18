from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.contrib import admin
from django.db.models import Count, F, Sum
from django.db.models.functions import TruncDate
from django.http import HttpRequest, HttpResponse

from billing.models import CreditEntry, Usage


@admin.register(Usage)
class UsageAdmin(admin.ModelAdmin):
    list_display = [
        "created_at",
        "user",
        "kind",
        "model",
        "input_tokens",
        "output_tokens",
        "seconds",
        "images",
        "cost",
        "source",
        "notebook",
    ]
    list_filter = ["kind", "model", "user"]
    date_hierarchy = "created_at"
    search_fields = ["user__username", "model"]
    list_select_related = ["user", "source", "notebook"]
    raw_id_fields = ["user", "source", "notebook", "message"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # rows come from model calls only

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        """The list with the totals of what it shows (after filters), per user, model, kind."""
        response = super().changelist_view(request, extra_context)
        context = getattr(response, "context_data", None)
        if not context or "cl" not in context:
            return response  # a redirect, or the filters were invalid
        rows = context["cl"].queryset.order_by()
        sums = {"calls": Count("id"), "cost": Sum("cost", default=Decimal(0))}
        context["usage_totals"] = rows.aggregate(**sums)
        context["usage_totals_by"] = {
            title: [
                (group["label"] or "(none)", group["calls"], group["cost"])
                for group in rows.annotate(label=label)
                .values("label")
                .annotate(**sums)
                .order_by("-cost", "label")
            ]
            for title, label in [
                ("day", TruncDate("created_at")),
                ("user", F("user__username")),
                ("model", F("model")),
                ("kind", F("kind")),
            ]
        }
        return response


@admin.register(CreditEntry)
class CreditEntryAdmin(admin.ModelAdmin):
    """The ledger: add a grant here (a negative amount takes credit away); entries are
    never changed or deleted, a correction is another entry."""

    list_display = ["created_at", "user", "kind", "amount", "reason", "usage"]
    list_filter = ["kind", "user"]
    date_hierarchy = "created_at"
    search_fields = ["user__username", "reason"]
    list_select_related = ["user", "usage"]
    fields = ["user", "amount", "reason"]
    raw_id_fields = ["user"]

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: CreditEntry, form: Any, change: bool) -> None:
        obj.kind = CreditEntry.Kind.GRANT
        super().save_model(request, obj, form, change)
